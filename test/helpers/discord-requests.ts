/**
 * Interactions into the gateway signed exactly as Discord signs them: Ed25519 over timestamp + body, in
 * X-Signature-Ed25519 (hex) and X-Signature-Timestamp, with the application's key pair made for the test.
 */
import { generateKeyPairSync, randomInt, sign, type KeyObject } from 'node:crypto';

export class DiscordKeys {
  private readonly privateKey: KeyObject;
  readonly publicKeyHex: string;

  constructor() {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    this.privateKey = privateKey;
    // The raw 32-byte key is the tail of the SPKI encoding; Discord shows it as hex.
    this.publicKeyHex = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
  }

  sign(body: string, timestamp: number): Record<string, string> {
    const signature = sign(null, Buffer.from(`${timestamp}${body}`), this.privateKey).toString('hex');
    return { 'x-signature-ed25519': signature, 'x-signature-timestamp': String(timestamp) };
  }
}

export const snowflake = (): string => String(1_200_000_000_000_000_000n + BigInt(randomInt(1, 2 ** 47)));

export interface InteractionReply {
  status: number;
  json: { type?: number; data?: Record<string, unknown> } & Record<string, unknown>;
  text: string;
}

export class DiscordRequests {
  constructor(
    private readonly gatewayUrl: string,
    private readonly keys: DiscordKeys,
  ) {}

  async post(
    body: string,
    options: { timestamp?: number; keys?: DiscordKeys; headers?: Record<string, string> } = {},
  ): Promise<InteractionReply> {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const response = await fetch(`${this.gatewayUrl}/discord/interactions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.keys ?? this.keys).sign(body, timestamp),
        ...options.headers,
      },
      body,
    });
    const text = await response.text();
    let json = {};
    try {
      json = JSON.parse(text) as object;
    } catch {
      // not JSON: status and text say why
    }
    return { status: response.status, json, text };
  }

  interaction(
    type: number,
    channelId: string,
    userId: string,
    data: Record<string, unknown>,
    token = `token-${snowflake()}`,
  ) {
    return this.post(
      JSON.stringify({
        id: snowflake(),
        application_id: '1000000000000000001',
        type,
        data,
        guild_id: '1000000000000000002',
        channel_id: channelId,
        member: { user: { id: userId, username: `user-${userId.slice(-3)}` }, roles: [] },
        token,
        version: 1,
      }),
    );
  }

  ask(channelId: string, userId: string, text: string) {
    return this.interaction(2, channelId, userId, {
      id: '1000000000000000003',
      name: 'agent',
      type: 1,
      options: [{ name: 'ask', type: 1, options: [{ name: 'text', type: 3, value: text }] }],
    });
  }

  pending(channelId: string, userId: string) {
    return this.subcommand('pending', channelId, userId);
  }

  stop(channelId: string, userId: string) {
    return this.subcommand('stop', channelId, userId);
  }

  /** `/agent <name>` without options, as Discord sends a slash command. */
  private subcommand(name: string, channelId: string, userId: string) {
    return this.interaction(2, channelId, userId, {
      id: '1000000000000000003',
      name: 'agent',
      type: 1,
      options: [{ name, type: 1, options: [] }],
    });
  }

  click(
    channelId: string,
    userId: string,
    customId: string,
    extra: { values?: string[]; token?: string } = {},
  ) {
    return this.interaction(
      3,
      channelId,
      userId,
      {
        custom_id: customId,
        component_type: extra.values ? 3 : 2,
        ...(extra.values ? { values: extra.values } : {}),
      },
      extra.token,
    );
  }

  /** A modal submission as Discord sends it: each text input inside its label. */
  submit(channelId: string, userId: string, customId: string, fields: Record<string, string>) {
    return this.interaction(3 + 2, channelId, userId, {
      custom_id: customId,
      components: Object.entries(fields).map(([id, value], i) => ({
        type: 18,
        id: i + 1,
        component: { type: 4, id: i + 10, custom_id: id, value },
      })),
    });
  }
}

/**
 * Discord interactions over HTTP (`POST /discord/interactions`): verified with Ed25519 and
 * DISCORD_PUBLIC_KEY, then turned into signals. Every interaction is answered inside Discord's 3 seconds,
 * also while every worker is down: signals need only the Temporal server, and the wait for the
 * workflow's verdict (to answer the clicker ephemerally) is bounded. Later edits of prompts are done by
 * the workflow with the bot token, so a click the next day still updates its message.
 *
 * This file is the endpoint (verification, parsing, routing by interaction type); the handlers live in
 * interaction-*.ts: the slash command, components, dialogs, and the verdict wait they share.
 */
import { verifyKey } from 'discord-interactions';
import { InteractionResponseType, InteractionType, type APIInteractionResponse } from 'discord-api-types/v10';
import { Hono, type Context } from 'hono';
import { bodyLimits } from '../../gateways/body-limits';
import { decodeCustomId } from './ids';
import { ephemeral, interactionSchema, type InteractionDeps } from './interaction-context';
import { command } from './interaction-command';
import { component } from './interaction-components';
import { modalSubmit } from './interaction-dialogs';

export { SIGNAL_BUDGET_MS } from './interaction-verdict';
export { modalValues } from './interaction-dialogs';

/** Requests signed longer ago than this are refused as replays. */
const MAX_SIGNATURE_AGE_S = 300;
const MAX_BODY_BYTES = 64 * 1024;

const reply = (c: Context, response: APIInteractionResponse) => c.json(response);

export function discordInteractionsApp(options: InteractionDeps & { publicKey: string }): Hono {
  const { publicKey } = options;
  const app = new Hono();
  app.use('*', bodyLimits());

  app.post('/discord/interactions', async (c) => {
    const signature = c.req.header('x-signature-ed25519') ?? '';
    const timestamp = c.req.header('x-signature-timestamp') ?? '';
    const raw = await c.req.arrayBuffer();
    if (raw.byteLength > MAX_BODY_BYTES) return c.text('request body too large', 413);
    const body = Buffer.from(raw);
    if (!(await verified(body, signature, timestamp, publicKey)))
      return c.text('invalid request signature', 401);
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SIGNATURE_AGE_S)
      return c.text('request signature is too old (replayed?)', 401);
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return c.text('body is not JSON', 400);
    }
    const parsed = interactionSchema.safeParse(json);
    if (!parsed.success) return c.text(`not an interaction: ${parsed.error.issues[0]?.message}`, 400);
    const interaction = parsed.data;
    if (interaction.type === InteractionType.Ping) return c.json({ type: InteractionResponseType.Pong });
    const userId = interaction.member?.user.id ?? interaction.user?.id;
    if (!userId || !interaction.channel_id) return c.text('interaction without a user or channel', 400);
    const context = { interaction, userId, channelId: interaction.channel_id };
    switch (interaction.type) {
      case InteractionType.ApplicationCommand:
        return reply(c, await command(options, context));
      case InteractionType.MessageComponent:
      case InteractionType.ModalSubmit: {
        const custom = decodeCustomId(interaction.data?.custom_id);
        if (!custom)
          return reply(c, ephemeral('That control is not one of ours or is malformed; nothing was done.'));
        const handler = interaction.type === InteractionType.ModalSubmit ? modalSubmit : component;
        return reply(c, await handler(options, { ...context, custom }));
      }
      default:
        return c.text(`interaction type ${interaction.type} is not handled`, 400);
    }
  });
  app.all('/discord/interactions', (c) => c.text('use POST', 405));
  app.all('/discord/*', (c) => c.text('not found', 404));

  return app;
}

async function verified(
  body: Buffer,
  signature: string,
  timestamp: string,
  publicKey: string,
): Promise<boolean> {
  if (!/^[0-9a-f]{128}$/i.test(signature) || !/^\d{1,12}$/.test(timestamp)) return false;
  try {
    return await verifyKey(body, signature, timestamp, publicKey);
  } catch {
    return false;
  }
}

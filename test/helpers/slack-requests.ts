/** Requests into the gateway signed exactly as Slack signs them (v0 HMAC-SHA256 over "v0:<ts>:<body>"). */
import { createHmac } from 'node:crypto';

export function slackSignature(secret: string, body: string, timestamp: number): Record<string, string> {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'x-slack-signature': signature, 'x-slack-request-timestamp': String(timestamp) };
}

export class SlackRequests {
  constructor(
    private readonly gatewayUrl: string,
    private readonly secret: string,
  ) {}

  async post(
    body: string,
    contentType: string,
    options: { timestamp?: number; headers?: Record<string, string>; secret?: string } = {},
  ) {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const response = await fetch(`${this.gatewayUrl}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': contentType,
        ...slackSignature(options.secret ?? this.secret, body, timestamp),
        ...options.headers,
      },
      body,
    });
    return { status: response.status, text: await response.text() };
  }

  event(
    event: Record<string, unknown>,
    options: { retryNum?: number; eventId?: string; teamId?: string } = {},
  ) {
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: options.teamId ?? 'T1',
      api_app_id: 'A1',
      event_id: options.eventId ?? `Ev${Math.random()}`,
      event_time: 1,
      event,
    });
    return this.post(
      body,
      'application/json',
      options.retryNum
        ? {
            headers: {
              'x-slack-retry-num': String(options.retryNum),
              'x-slack-retry-reason': 'http_timeout',
            },
          }
        : {},
    );
  }

  interaction(payload: Record<string, unknown>) {
    return this.post(
      `payload=${encodeURIComponent(JSON.stringify(payload))}`,
      'application/x-www-form-urlencoded',
    );
  }

  command(fields: Record<string, string>) {
    return this.post(new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded');
  }
}

let nextTs = 1;
/** A channel message that mentions the bot, as Slack delivers it. */
export function mention(text: string, extra: Record<string, unknown> = {}) {
  const ts = `1700000000.${String(nextTs++).padStart(6, '0')}`;
  return {
    type: 'app_mention',
    user: 'U1',
    text: `<@UBOT> ${text}`,
    ts,
    channel: 'C1',
    event_ts: ts,
    ...extra,
  };
}

/** A reply in the thread a mention started, as Slack delivers it (its own ts, later than the thread's). */
export function threadReply(threadTs: string, text: string, user = 'U1') {
  const ts = `1700000000.${String(nextTs++).padStart(6, '0')}`;
  return { type: 'message', user, text, ts, thread_ts: threadTs, channel: 'C1', channel_type: 'channel' };
}

/** A button click on one of the agent's prompts. */
export function click(actionId: string, value: string, user: string, responseUrl: string) {
  return {
    type: 'block_actions',
    team: { id: 'T1' },
    user: { id: user, team_id: 'T1' },
    api_app_id: 'A1',
    trigger_id: `trigger-${Math.random()}`,
    response_url: responseUrl,
    channel: { id: 'C1' },
    container: { type: 'message', channel_id: 'C1' },
    actions: [{ type: 'button', action_id: actionId, block_id: 'gate', value, action_ts: '1' }],
  };
}

/** A submitted modal. */
export function submitView(
  callbackId: string,
  privateMetadata: string,
  user: string,
  values: Record<string, unknown>,
) {
  return {
    type: 'view_submission',
    team: { id: 'T1' },
    user: { id: user, team_id: 'T1' },
    api_app_id: 'A1',
    trigger_id: 't',
    view: {
      id: 'V1',
      type: 'modal',
      callback_id: callbackId,
      private_metadata: privateMetadata,
      state: { values },
    },
  };
}

/**
 * A guard in front of Bolt's HTTP receiver: reads the body once (Bolt reuses `req.rawBody`) and refuses,
 * with a clear 400, bodies that are not a Slack event, interaction or command. Bolt would otherwise crash
 * the process on a signed `null` body, or leave an unknown payload unanswered for 3 seconds.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { isValidSlackRequest } from '@slack/bolt';
import { bodyLimitFor } from '../../gateways/body-limits';

const BODY_LIMIT = bodyLimitFor('/slack/');

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new Error('too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Why a body is not something Slack sends, or undefined when it looks like one. */
export function slackBodyProblem(contentType: string, body: string): string | undefined {
  if (contentType.startsWith('application/json')) {
    const parsed = parseJson(body);
    if (!isObject(parsed) || typeof parsed.type !== 'string')
      return 'expected a JSON object with a "type" (an Events API request)';
    if (
      parsed.type === 'event_callback' &&
      !(isObject(parsed.event) && typeof parsed.event.type === 'string')
    ) {
      return 'an event_callback needs an "event" object with a "type"';
    }
    return undefined;
  }
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    const fields = parseQuery(body);
    if (fields.ssl_check === '1' || typeof fields.command === 'string') return undefined;
    const payload = typeof fields.payload === 'string' ? parseJson(fields.payload) : undefined;
    if (!isObject(payload) || typeof payload.type !== 'string')
      return 'expected payload=<JSON object with a "type"> (an interaction) or a slash command';
    if (!isObject(payload.user)) return 'an interaction needs a "user" object';
    if (
      payload.type === 'block_actions' &&
      !(Array.isArray(payload.actions) && payload.actions.every(isObject))
    )
      return 'block_actions needs an "actions" list';
    if (payload.type === 'view_submission' && !isObject(payload.view))
      return 'view_submission needs a "view" object';
    return undefined;
  }
  return 'expected application/json or application/x-www-form-urlencoded';
}

export function guardSlackRequests(listener: RequestListener, signingSecret: string): RequestListener {
  const reply = (res: ServerResponse, status: number, error: string) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
  return (req, res) => {
    void (async () => {
      let body: Buffer;
      try {
        body = await readBody(req);
      } catch {
        return reply(res, 413, 'request body too large');
      }
      const text = body.toString('utf8');
      const contentType = req.headers['content-type'] ?? '';
      const sslCheck =
        contentType.startsWith('application/x-www-form-urlencoded') && parseQuery(text).ssl_check === '1';
      if (req.method === 'POST' && !sslCheck) {
        // The signature first: a forged request learns nothing, not even whether its body was well formed.
        const signed = isValidSlackRequest({
          signingSecret,
          body: text,
          headers: {
            'x-slack-signature': String(req.headers['x-slack-signature'] ?? ''),
            'x-slack-request-timestamp': Number(req.headers['x-slack-request-timestamp'] ?? 0),
          },
        });
        if (!signed) return reply(res, 401, 'invalid or stale Slack signature');
        const problem = slackBodyProblem(contentType, text);
        if (problem) return reply(res, 400, `not a Slack request: ${problem}`);
      }
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
      await listener(req, res);
    })();
  };
}

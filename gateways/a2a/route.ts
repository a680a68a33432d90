/**
 * `POST /api/a2a`: A2A JSON-RPC over HTTP, 1.0 (`A2A-Version: 1.0`) and 0.3 (no header, or `0.3`), both answered by
 * the same handler (handler.ts) through the SDK's own transports; streaming methods answer as server-sent events.
 * The web API's guard has identified the caller before this runs (same sign-in modes, host rule and rate limits).
 * `GET /.well-known/agent-card.json` is public, as A2A asks.
 */
import { AgentCard, A2A_VERSION_HEADER, formatSSEErrorEvent, formatSSEEvent } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext, type User } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import type { Context } from 'hono';
import { stream } from 'hono/streaming';
import { tooMany, type ApiEnv, type WebApi } from '../web/api-context';
import { RateLimiter } from '../web/auth/rate-limit';
import { StreamCap, TOO_MANY_STREAMS } from '../web/stream-cap';
import { NOT_ANSWERING } from '../web/message-route';
import { ABORT_KEY, ConversationTasks } from './handler';
import { guarded } from './guarded';

/** A person's A2A calls a minute, per gateway (each reads or signals a workflow): an agent's pace, never a flood. */
const CALLS_PER_MINUTE = 120;
const KEEPALIVE_MS = 20_000;

/** The caller the web guard identified. */
class Person implements User {
  constructor(private readonly id: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.id;
  }
}

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', id: null, error: { code, message } });

export function a2aCard(card: AgentCard) {
  const body = AgentCard.toJSON(card);
  return (c: Context) => c.json(body as object, 200, { 'cache-control': 'max-age=300' });
}

export function a2aRpc(api: WebApi, card: AgentCard): (c: Context<ApiEnv>) => Promise<Response> {
  const handler = guarded(new ConversationTasks(api, card), [NOT_ANSWERING], api.deps.log);
  const current = new JsonRpcTransportHandler(handler);
  const legacy = new LegacyJsonRpcTransportHandler(handler);
  // Every call holds a slot while it waits (a blocking send, a stream): as many as the page's own streams.
  const cap = new StreamCap();
  const rate = new RateLimiter(CALLS_PER_MINUTE);
  return async (c) => {
    const userId = c.get('userId');
    const wait = rate.take(userId);
    if (wait !== undefined) {
      c.header('retry-after', String(wait));
      return c.json(rpcError(-32603, tooMany({ what: 'A2A calls', wait })), 429);
    }
    const taken = cap.take(userId);
    if (!taken) return c.json(rpcError(-32603, TOO_MANY_STREAMS), 429);
    const release = taken;
    let streaming = false;
    try {
      const answer = await respond(c);
      streaming = answer.streaming;
      return answer.response;
    } finally {
      if (!streaming) release();
    }

    async function respond(c: Context<ApiEnv>): Promise<{ response: Response; streaming: boolean }> {
      const version = c.req.header(A2A_VERSION_HEADER)?.trim() || '0.3';
      const plain = (response: Response) => ({ response, streaming: false });
      if (version !== '1.0' && version !== '0.3')
        return plain(c.json(rpcError(-32009, `A2A version ${version} is not spoken here: 1.0 or 0.3`)));
      const body: unknown = await c.req.json().catch(() => undefined);
      if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body))
        return plain(c.json(rpcError(-32700, 'the body must be one JSON-RPC 2.0 request object')));
      const context = new ServerCallContext({ user: new Person(userId), requestedVersion: version });
      // A caller that goes away ends what waits for it (a blocking send, a stream) at once.
      context.state.set(ABORT_KEY, c.req.raw.signal);
      const answer =
        version === '1.0'
          ? await current.handle(body as Record<string, unknown>, context)
          : await legacy.handle(body as Record<string, unknown>, context);
      if (!isStream(answer)) return plain(c.json(answer));
      // A stream whose first step fails answers as plain JSON-RPC (the client reads an error, not an empty stream).
      const iterator = answer[Symbol.asyncIterator]();
      let first: IteratorResult<unknown>;
      try {
        first = await iterator.next();
      } catch (error) {
        return plain(c.json(errorEnvelope(version, body, error)));
      }
      c.header('content-type', 'text/event-stream');
      c.header('cache-control', 'no-cache');
      c.header('x-accel-buffering', 'no');
      const response = stream(c, async (out) => {
        const keepalive = setInterval(() => void out.write(': keepalive\n\n').catch(() => {}), KEEPALIVE_MS);
        out.onAbort(() => void iterator.return?.(undefined));
        try {
          for (let step = first; !step.done; step = await iterator.next())
            await out.write(formatSSEEvent(step.value));
        } catch (error) {
          await out.write(formatSSEErrorEvent(errorEnvelope(version, body, error))).catch(() => {});
          api.deps.log.warn('a2a stream ended with an error', { error: (error as Error).message });
        } finally {
          clearInterval(keepalive);
          release();
        }
      });
      return { response, streaming: true };
    }
  };
}

function isStream(value: unknown): value is AsyncGenerator<unknown, void, undefined> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === 'function';
}

function errorEnvelope(version: string, body: object, error: unknown) {
  const id = (body as { id?: string | number | null }).id ?? null;
  const mapped =
    version === '1.0'
      ? JsonRpcTransportHandler.mapToJSONRPCError(error)
      : LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error);
  return { jsonrpc: '2.0', id, error: mapped };
}

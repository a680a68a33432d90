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
import type { ApiEnv, WebApi } from '../web/api-context';
import { ConversationTasks } from './handler';

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
  const handler = new ConversationTasks(api, card);
  const current = new JsonRpcTransportHandler(handler);
  const legacy = new LegacyJsonRpcTransportHandler(handler);
  return async (c) => {
    const version = c.req.header(A2A_VERSION_HEADER)?.trim() || '0.3';
    if (version !== '1.0' && version !== '0.3')
      return c.json(rpcError(-32009, `A2A version ${version} is not spoken here: 1.0 or 0.3`));
    const body: unknown = await c.req.json().catch(() => undefined);
    if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body))
      return c.json(rpcError(-32700, 'the body must be one JSON-RPC 2.0 request object'));
    const context = new ServerCallContext({ user: new Person(c.get('userId')), requestedVersion: version });
    const answer =
      version === '1.0'
        ? await current.handle(body as Record<string, unknown>, context)
        : await legacy.handle(body as Record<string, unknown>, context);
    if (!isStream(answer)) return c.json(answer);
    // A stream whose first step fails answers as plain JSON-RPC (the client reads an error, not an empty stream).
    const iterator = answer[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await iterator.next();
    } catch (error) {
      return c.json(errorEnvelope(version, body, error));
    }
    c.header('content-type', 'text/event-stream');
    c.header('cache-control', 'no-cache');
    c.header('x-accel-buffering', 'no');
    return stream(c, async (out) => {
      out.onAbort(() => void iterator.return?.(undefined));
      try {
        for (let step = first; !step.done; step = await iterator.next())
          await out.write(formatSSEEvent(step.value));
      } catch (error) {
        await out.write(formatSSEErrorEvent(errorEnvelope(version, body, error))).catch(() => {});
        api.deps.log.warn('a2a stream ended with an error', { error: (error as Error).message });
      }
    });
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

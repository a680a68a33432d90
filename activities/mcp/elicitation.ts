/**
 * A tool server's questions during a call (MCP elicitation), on the worker's side of the rounds described in
 * common/tools/elicitation.ts: a request the person already answered (same digest, in order) gets that answer; a
 * new one is kept for the session to ask, answered "cancel", and the call is cut short so the session can ask.
 *
 * A connection is shared by the calls made on it, and a server's request does not say which call it belongs to:
 * it is matched only when exactly one call is in flight on the connection; otherwise it is answered "cancel" (and
 * logged), never given to the wrong person.
 */
import { createHash } from 'node:crypto';
import type { ElicitAsk, ElicitProperty, ElicitReply } from '../../common/tools/elicitation';

const MAX_MESSAGE_CHARS = 1_000;
const MAX_PROPERTIES = 30;
const MAX_TEXT = 500;
const MAX_VALUES = 100;

/** One call's replies to give and what its server asked anew. */
export class CallInputs {
  private used = 0;
  asked: ElicitAsk | undefined;
  /** Cuts the call short once its server asked something new (it is made again with the answer). */
  readonly cut = new AbortController();

  constructor(readonly given: readonly ElicitReply[]) {}

  /** The reply for this request: the next given one when it is the same request, else none (ask the person). */
  next(ask: ElicitAsk): ElicitReply | undefined {
    const reply = this.given[this.used];
    if (reply?.digest !== ask.digest) return undefined;
    this.used++;
    return reply;
  }
}

type ElicitResult = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };

export class ElicitationBroker {
  private readonly calls = new Set<CallInputs>();

  constructor(
    private readonly server: string,
    private readonly log?: (message: string, fields: object) => void,
  ) {}

  /** Runs one call with its inputs; afterwards `inputs.asked` says whether the server asked something new. */
  async during<T>(inputs: CallInputs, run: () => Promise<T>): Promise<T> {
    this.calls.add(inputs);
    try {
      return await run();
    } finally {
      this.calls.delete(inputs);
    }
  }

  /** The SDK's `elicitation/create` handler. */
  answer(params: unknown): ElicitResult {
    const ask = toAsk(this.server, params);
    if (!ask) return { action: 'decline' };
    if (this.calls.size !== 1) {
      this.log?.('MCP question not matched to one call', {
        server: this.server,
        callsInFlight: this.calls.size,
      });
      return { action: 'cancel' };
    }
    const [call] = this.calls as unknown as [CallInputs];
    if (call.asked) return { action: 'cancel' };
    const reply = call.next(ask);
    if (reply)
      return reply.action === 'accept'
        ? { action: 'accept', content: reply.content ?? {} }
        : { action: reply.action };
    call.asked = ask;
    // Answered first, then the call is cut short: the server is told, and nobody waits for what it does next.
    setImmediate(() => call.cut.abort(new Error('the server asked the person a question')));
    return { action: 'cancel' };
  }
}

/** A URL-mode question a server raised as an error (`UrlElicitationRequired`) instead of a request. */
export function urlAskFromError(server: string, data: unknown): ElicitAsk | undefined {
  const elicitations = (data as { elicitations?: unknown } | undefined)?.elicitations;
  const first: unknown = Array.isArray(elicitations) ? elicitations[0] : undefined;
  return first ? toAsk(server, { ...(first as object), mode: 'url' }) : undefined;
}

/** What a server asked, bounded and copied field by field (nothing else of its request reaches history). */
export function toAsk(server: string, params: unknown): ElicitAsk | undefined {
  const p = (params ?? {}) as Record<string, unknown>;
  const message = String(p.message ?? '').slice(0, MAX_MESSAGE_CHARS);
  if (p.mode === 'url') {
    const url = String(p.url ?? '');
    // Only a link a person can open in a browser.
    if (!/^https?:\/\//i.test(url) || url.length > 2_000) return undefined;
    return { mode: 'url', server, message, url, digest: digest({ mode: 'url', message, url }) };
  }
  const schema = (p.requestedSchema ?? {}) as { properties?: Record<string, unknown>; required?: unknown };
  const properties: Record<string, ElicitProperty> = {};
  for (const [key, raw] of Object.entries(schema.properties ?? {}).slice(0, MAX_PROPERTIES))
    properties[key.slice(0, 100)] = property(raw as Record<string, unknown>);
  const required = Array.isArray(schema.required)
    ? schema.required.filter((k): k is string => typeof k === 'string' && k in properties)
    : [];
  return {
    mode: 'form',
    server,
    message,
    properties,
    required,
    digest: digest({ mode: 'form', message, schema: p.requestedSchema ?? null }),
  };
}

function property(raw: Record<string, unknown>): ElicitProperty {
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, MAX_TEXT) : undefined);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.slice(0, MAX_VALUES).map((s) => String(s).slice(0, 200)) : undefined;
  const titled = (v: unknown) =>
    Array.isArray(v)
      ? v.slice(0, MAX_VALUES).map((o: { const?: unknown; title?: unknown }) => ({
          const: String(o?.const ?? '').slice(0, 200),
          title: String(o?.title ?? o?.const ?? '').slice(0, 200),
        }))
      : undefined;
  const type = ['string', 'number', 'integer', 'boolean', 'array'].includes(raw.type as string)
    ? (raw.type as ElicitProperty['type'])
    : 'string';
  const items = (raw.items ?? {}) as Record<string, unknown>;
  const format = ['email', 'uri', 'date', 'date-time'].includes(raw.format as string)
    ? (raw.format as ElicitProperty['format'])
    : undefined;
  const entries: Partial<ElicitProperty> = {
    title: text(raw.title),
    description: text(raw.description),
    enum: strings(raw.enum),
    enumNames: strings(raw.enumNames),
    oneOf: titled(raw.oneOf),
    items: type === 'array' ? { enum: strings(items.enum), anyOf: titled(items.anyOf) } : undefined,
    minLength: num(raw.minLength),
    maxLength: num(raw.maxLength),
    minimum: num(raw.minimum),
    maximum: num(raw.maximum),
    minItems: num(raw.minItems),
    maxItems: num(raw.maxItems),
    format,
  };
  return {
    type,
    ...Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)),
  } as ElicitProperty;
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);
}

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
import {
  MAX_ELICIT_FIELDS,
  type ElicitAsk,
  type ElicitProperty,
  type ElicitReply,
} from '../../common/tools/elicitation';

const MAX_MESSAGE_CHARS = 1_000;
const MAX_TEXT = 500;
const MAX_VALUES = 50;
const MAX_VALUE_CHARS = 100;
/** The whole ask as it enters history (activity result, then the gate). */
const MAX_ASK_BYTES = 32_000;

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
  /**
   * Once a call was cut short, the server's handler for it may still be running and ask again: nothing it asks
   * can be tied to a call any more, so the connection is retired (the pool opens a new one for the next call)
   * and every question on it is answered "cancel" until it is closed, once its calls in flight are done.
   */
  private retired = false;
  private onIdle: (() => void) | undefined;

  constructor(
    private readonly server: string,
    private readonly log?: (message: string, fields: object) => void,
  ) {}

  get isRetired(): boolean {
    return this.retired;
  }

  /** Runs one call with its inputs; afterwards `inputs.asked` says whether the server asked something new. */
  async during<T>(inputs: CallInputs, run: () => Promise<T>): Promise<T> {
    this.calls.add(inputs);
    try {
      return await run();
    } finally {
      this.calls.delete(inputs);
      if (!this.calls.size) this.onIdle?.();
    }
  }

  /** No more questions are tied to calls on this connection; `close` runs once no call is in flight on it. */
  retire(close: () => void): void {
    this.retired = true;
    if (!this.calls.size) close();
    else this.onIdle = close;
  }

  /** The SDK's `elicitation/create` handler. */
  answer(params: unknown): ElicitResult {
    const ask = toAsk(this.server, params);
    if ('refused' in ask) {
      this.log?.('MCP question refused', { server: this.server, why: ask.refused });
      return { action: 'decline' };
    }
    if (this.retired || this.calls.size !== 1) {
      this.log?.('MCP question not matched to one call', {
        server: this.server,
        callsInFlight: this.calls.size,
        retired: this.retired,
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
    // The call is cut short first (the server is told it is cancelled before it reads the answer), then answered.
    call.cut.abort(new Error('the server asked the person a question'));
    return { action: 'cancel' };
  }
}

/** A URL-mode question a server raised as an error (`UrlElicitationRequired`) instead of a request. */
export function urlAskFromError(server: string, data: unknown): ElicitAsk | undefined {
  const elicitations = (data as { elicitations?: unknown } | undefined)?.elicitations;
  const first: unknown = Array.isArray(elicitations) ? elicitations[0] : undefined;
  const ask = first ? toAsk(server, { ...(first as object), mode: 'url' }) : undefined;
  return ask && !('refused' in ask) ? ask : undefined;
}

/** What a server asked, bounded and copied field by field (nothing else of its request reaches history). */
export function toAsk(server: string, params: unknown): ElicitAsk | { refused: string } {
  const p = (params ?? {}) as Record<string, unknown>;
  const message = String(p.message ?? '').slice(0, MAX_MESSAGE_CHARS);
  if (p.mode === 'url') {
    const url = String(p.url ?? '');
    // Only a plain link a person can open in a browser: no spaces or characters chat markup gives a meaning.
    if (!/^https?:\/\/[^\s<>|"'`\\]+$/i.test(url) || url.length > 2_000)
      return { refused: 'a link that is not a plain http(s) URL' };
    return { mode: 'url', server, message, url, digest: digest({ mode: 'url', message, url }) };
  }
  const schema = (p.requestedSchema ?? {}) as { properties?: Record<string, unknown>; required?: unknown };
  const entries = Object.entries(schema.properties ?? {});
  if (entries.length > MAX_ELICIT_FIELDS)
    return { refused: `${entries.length} fields (at most ${MAX_ELICIT_FIELDS})` };
  const properties: Record<string, ElicitProperty> = {};
  for (const [key, raw] of entries) properties[key.slice(0, 100)] = property(raw as Record<string, unknown>);
  const required = Array.isArray(schema.required)
    ? schema.required.filter((k): k is string => typeof k === 'string' && Object.hasOwn(properties, k))
    : [];
  const ask: ElicitAsk = {
    mode: 'form',
    server,
    message,
    properties,
    required,
    digest: digest({ mode: 'form', message, schema: p.requestedSchema ?? null }),
  };
  // What reaches history is bounded whatever the server sends.
  const bytes = Buffer.byteLength(JSON.stringify(ask));
  return bytes > MAX_ASK_BYTES ? { refused: `${bytes} bytes (at most ${MAX_ASK_BYTES})` } : ask;
}

function property(raw: Record<string, unknown>): ElicitProperty {
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, MAX_TEXT) : undefined);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.slice(0, MAX_VALUES).map((s) => String(s).slice(0, MAX_VALUE_CHARS)) : undefined;
  const titled = (v: unknown) =>
    Array.isArray(v)
      ? v.slice(0, MAX_VALUES).map((o: { const?: unknown; title?: unknown }) => ({
          const: String(o?.const ?? '').slice(0, MAX_VALUE_CHARS),
          title: String(o?.title ?? o?.const ?? '').slice(0, MAX_VALUE_CHARS),
        }))
      : undefined;
  const type = ['string', 'number', 'integer', 'boolean', 'array'].includes(raw.type as string)
    ? (raw.type as ElicitProperty['type'])
    : 'string';
  const items = (raw.items ?? {}) as Record<string, unknown>;
  const format = ['email', 'uri', 'date', 'date-time'].includes(raw.format as string)
    ? (raw.format as ElicitProperty['format'])
    : undefined;
  const defaultValue =
    typeof raw.default === 'string'
      ? raw.default.slice(0, MAX_VALUE_CHARS)
      : typeof raw.default === 'number' || typeof raw.default === 'boolean'
        ? raw.default
        : undefined;
  const common = { title: text(raw.title), description: text(raw.description), default: defaultValue };
  // Only what the type uses is kept: one list of choices, the bounds that apply.
  const entries: Partial<ElicitProperty> =
    type === 'array'
      ? {
          ...common,
          items: items.anyOf ? { anyOf: titled(items.anyOf) } : { enum: strings(items.enum) },
          minItems: num(raw.minItems),
          maxItems: num(raw.maxItems),
        }
      : type === 'number' || type === 'integer'
        ? { ...common, minimum: num(raw.minimum), maximum: num(raw.maximum) }
        : type === 'boolean'
          ? common
          : raw.oneOf
            ? { ...common, oneOf: titled(raw.oneOf) }
            : raw.enum
              ? { ...common, enum: strings(raw.enum), enumNames: strings(raw.enumNames) }
              : { ...common, minLength: num(raw.minLength), maxLength: num(raw.maxLength), format };
  return {
    type,
    ...Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)),
  } as ElicitProperty;
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);
}

/**
 * MCP elicitation — a tool server asking the person for input in the middle of a call — made durable. The worker
 * cannot hold a call open for the days a person may take, so the call is made in rounds: the server's request is
 * answered "cancel" and brought back to the session (`input_required`), which asks the person with a question gate
 * (forms in every channel, typed answers, restarts), then makes the call again carrying the answer; the server's
 * same request in the new call is answered with it. The 2026 protocol revision's `input_required` result works the
 * same way (the SDK does not speak it yet). Pure: the workflow turns an ask into questions and answers into the
 * content the server's schema wants; the worker matches replies to requests by digest.
 */
import type { Answer, Question } from './ask-user';

/** Fields asked at most in one call (a question gate asks up to five at once: the rest in further gates). */
export const MAX_ELICIT_FIELDS = 15;
export const FIELDS_PER_GATE = 5;
/** Times one call may ask before it is ended (a server asking for ever is a bug, not a conversation). */
export const MAX_ELICIT_ROUNDS = 5;

type Primitive = string | number | boolean;
export type ElicitValue = Primitive | string[];

/** One property of a server's requested schema, as MCP allows them (flat: strings, numbers, booleans, enums). */
export interface ElicitProperty {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array';
  title?: string;
  description?: string;
  enum?: string[];
  enumNames?: string[];
  oneOf?: { const: string; title: string }[];
  items?: { enum?: string[]; anyOf?: { const: string; title: string }[] };
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  format?: 'email' | 'uri' | 'date' | 'date-time';
  default?: ElicitValue;
}

/** What a server asked, as it crosses from the worker to the session (bounded by the worker). */
export type ElicitAsk =
  | {
      mode: 'form';
      server: string;
      message: string;
      properties: Record<string, ElicitProperty>;
      required: string[];
      /** Identifies this request when the server makes it again in the next round. */
      digest: string;
    }
  | { mode: 'url'; server: string; message: string; url: string; digest: string };

/** The person's reply, carried by the next round of the call to the request with the same digest. */
export interface ElicitReply {
  digest: string;
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, ElicitValue>;
}

/** One field as a question gate keeps it: enough to turn the person's answer into the value the schema wants. */
export interface ElicitField {
  key: string;
  /** The question's label (unique within the ask). */
  label: string;
  kind: 'text' | 'number' | 'integer' | 'boolean' | 'choice' | 'choices';
  required: boolean;
  /** choice/choices: each option's label and the value sent. */
  values?: { value: string; label: string }[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: ElicitProperty['format'];
  /** An optional field's default, sent when the person leaves it unanswered (SEP-1034): shown on the question. */
  default?: ElicitValue;
}

const YES = 'Yes';
const NO = 'No';
const MAX_OPTIONS = 25;

/** The fields of a form ask, in the server's order; an error when the schema cannot be asked as questions. */
export function elicitFields(ask: Extract<ElicitAsk, { mode: 'form' }>): ElicitField[] | { error: string } {
  const keys = Object.keys(ask.properties);
  if (!keys.length) return { error: 'the server asked for nothing' };
  if (keys.length > MAX_ELICIT_FIELDS)
    return {
      error: `the server asked for ${keys.length} fields at once; at most ${MAX_ELICIT_FIELDS} are asked`,
    };
  const labels = new Set<string>();
  return keys.map((key) => {
    const property = ask.properties[key]!;
    const field = fieldOf(key, property);
    return field.required ? field : withDefault(field, property.default);
  });

  function fieldOf(key: string, property: ElicitProperty): ElicitField {
    let label = (property.title?.trim() || key).slice(0, 40).trim() || key.slice(0, 40);
    for (let n = 2; labels.has(label); n++) label = `${label.slice(0, 36)} ${n}`;
    labels.add(label);
    const required = ask.required.includes(key);
    const bounds = {
      ...(property.minimum === undefined ? {} : { minimum: property.minimum }),
      ...(property.maximum === undefined ? {} : { maximum: property.maximum }),
    };
    switch (property.type) {
      case 'boolean':
        return { key, label, kind: 'boolean', required };
      case 'number':
      case 'integer':
        return { key, label, kind: property.type, required, ...bounds };
      case 'array': {
        const values = choices(property.items?.enum, undefined, property.items?.anyOf);
        return {
          key,
          label,
          kind: 'choices',
          required,
          values,
          ...(property.minItems === undefined ? {} : { minItems: property.minItems }),
          ...(property.maxItems === undefined ? {} : { maxItems: property.maxItems }),
        };
      }
      default: {
        const values = choices(property.enum, property.enumNames, property.oneOf);
        if (values.length) return { key, label, kind: 'choice', required, values };
        return {
          key,
          label,
          kind: 'text',
          required,
          ...(property.minLength === undefined ? {} : { minLength: property.minLength }),
          ...(property.maxLength === undefined ? {} : { maxLength: property.maxLength }),
          ...(property.format ? { format: property.format } : {}),
        };
      }
    }
  }
}

/** The server's default for an optional field, kept only when it is a value the field could take. */
function withDefault(field: ElicitField, value: ElicitValue | undefined): ElicitField {
  if (value === undefined) return field;
  const fits =
    field.kind === 'boolean'
      ? typeof value === 'boolean'
      : field.kind === 'number'
        ? typeof value === 'number' && Number.isFinite(value)
        : field.kind === 'integer'
          ? typeof value === 'number' && Number.isInteger(value)
          : field.kind === 'choice'
            ? typeof value === 'string' && (field.values ?? []).some((v) => v.value === value)
            : field.kind === 'choices'
              ? Array.isArray(value) && value.every((v) => (field.values ?? []).some((o) => o.value === v))
              : typeof value === 'string';
  return fits ? { ...field, default: value } : field;
}

function choices(
  values: string[] | undefined,
  names: string[] | undefined,
  titled: { const: string; title: string }[] | undefined,
): { value: string; label: string }[] {
  const listed = titled?.length
    ? titled.map((o) => ({ value: o.const, label: o.title }))
    : (values ?? []).map((value, i) => ({ value, label: names?.[i] ?? value }));
  const seen = new Set<string>();
  return listed.map(({ value, label }) => {
    // Labels are what people pick (at most 75 characters, never empty, unique); the value is what the server gets.
    const base = (label.trim() || value.trim() || 'option').slice(0, 75);
    let shown = base;
    for (let n = 2; seen.has(shown); n++) shown = `${base.slice(0, 70)} (${n})`;
    seen.add(shown);
    return { value, label: shown };
  });
}

/** The question a field is asked as: its description, and what a valid answer looks like. */
export function fieldQuestion(field: ElicitField, property: ElicitProperty | undefined): Question {
  const about = (property?.description?.trim() || property?.title?.trim() || field.key).slice(0, 800);
  // The server's default applies when the answer is left out: the person sees it.
  const fallback = field.required ? undefined : property?.default;
  const shownDefault =
    fallback === undefined
      ? ''
      : `default: ${typeof fallback === 'boolean' ? (fallback ? YES : NO) : Array.isArray(fallback) ? fallback.join(', ') : String(fallback)}`;
  const hint = [expectation(field), shownDefault].filter(Boolean).join('; ');
  const prompt = `${about}${hint ? ` (${hint})` : ''}`.slice(0, 1_000);
  const base = { label: field.label, prompt, required: field.required };
  switch (field.kind) {
    case 'boolean':
      return { ...base, options: [{ label: YES }, { label: NO }], multi_select: false, allow_custom: false };
    case 'choice':
    case 'choices': {
      const values = field.values ?? [];
      // More options than a form holds: typed, and checked against the values.
      if (values.length > MAX_OPTIONS)
        return { ...base, options: [], multi_select: false, allow_custom: true };
      return {
        ...base,
        options: values.map((v) => ({ label: v.label })),
        multi_select: field.kind === 'choices',
        allow_custom: false,
      };
    }
    default:
      return { ...base, options: [], multi_select: false, allow_custom: true };
  }
}

/** "a whole number from 1 to 12", "an email address", …: said in the question and in a refusal. */
function expectation(field: ElicitField): string {
  const range = (unit: string) =>
    field.minimum !== undefined && field.maximum !== undefined
      ? `${unit} from ${field.minimum} to ${field.maximum}`
      : field.minimum !== undefined
        ? `${unit}, at least ${field.minimum}`
        : field.maximum !== undefined
          ? `${unit}, at most ${field.maximum}`
          : unit;
  switch (field.kind) {
    case 'integer':
      return range('a whole number');
    case 'number':
      return range('a number');
    case 'text': {
      const format = {
        email: 'an email address',
        uri: 'a URL',
        date: 'a date, YYYY-MM-DD',
        'date-time': 'a date and time, e.g. 2026-11-28T09:30:00Z',
      };
      const length =
        field.minLength !== undefined && field.maxLength !== undefined
          ? `${field.minLength} to ${field.maxLength} characters`
          : field.maxLength !== undefined
            ? `at most ${field.maxLength} characters`
            : field.minLength !== undefined
              ? `at least ${field.minLength} characters`
              : '';
      return [field.format ? format[field.format] : '', length].filter(Boolean).join(', ');
    }
    case 'choices':
      return (field.values?.length ?? 0) > MAX_OPTIONS
        ? `several of: ${field.values!.map((v) => v.label).join(', ')}`.slice(0, 300)
        : field.minItems || field.maxItems
          ? `pick ${field.minItems ?? 0} to ${field.maxItems ?? field.values?.length ?? 0}`
          : '';
    case 'choice':
      return (field.values?.length ?? 0) > MAX_OPTIONS
        ? `one of: ${field.values!.map((v) => v.label).join(', ')}`.slice(0, 300)
        : '';
    default:
      return '';
  }
}

export type ContentCheck = { ok: true; content: Record<string, ElicitValue> } | { ok: false; error: string };

/** The answers as the content the server's schema wants; an error naming the first answer that does not fit. */
export function elicitContent(
  fields: readonly ElicitField[],
  answers: readonly Pick<Answer, 'question' | 'selected' | 'custom'>[],
): ContentCheck {
  const content: Record<string, ElicitValue> = {};
  for (const field of fields) {
    const answer = answers.find((a) => a.question === field.label);
    const text = answer?.custom?.trim() ?? '';
    const picked = answer?.selected ?? [];
    if (!text && !picked.length) {
      if (field.required) return { ok: false, error: `"${field.label}" needs an answer` };
      // Left as it was shown: the server's default (SEP-1034), not a missing value.
      if (field.default !== undefined) content[field.key] = field.default;
      continue;
    }
    const value = fieldValue(field, picked, text);
    if (typeof value === 'object' && !Array.isArray(value)) return { ok: false, error: value.error };
    content[field.key] = value;
  }
  return { ok: true, content };
}

function fieldValue(
  field: ElicitField,
  picked: readonly string[],
  text: string,
): ElicitValue | { error: string } {
  const wanted = () => {
    const hint = expectation(field);
    return { error: `"${field.label}" takes ${hint || 'another answer'} (“${text.slice(0, 60)}” is not)` };
  };
  const valueOf = (pick: string) =>
    field.values?.find(
      (v) => v.label === pick || v.value === pick || v.label.toLowerCase() === pick.toLowerCase(),
    )?.value;
  switch (field.kind) {
    case 'boolean':
      return (picked[0] ?? text).toLowerCase() === YES.toLowerCase();
    case 'number':
    case 'integer': {
      // "1,5" is refused rather than read as 15 or 1.5.
      const n = Number(text);
      if (!text || !Number.isFinite(n) || (field.kind === 'integer' && !Number.isInteger(n))) return wanted();
      if (
        (field.minimum !== undefined && n < field.minimum) ||
        (field.maximum !== undefined && n > field.maximum)
      )
        return wanted();
      return n;
    }
    case 'choice': {
      const value = valueOf(picked[0] ?? text);
      return value ?? wanted();
    }
    case 'choices': {
      const picks = picked.length
        ? picked
        : text
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean);
      const values = picks.map(valueOf);
      if (values.some((v) => v === undefined)) return wanted();
      const count = values.length;
      if (
        (field.minItems !== undefined && count < field.minItems) ||
        (field.maxItems !== undefined && count > field.maxItems)
      )
        return {
          error: `"${field.label}" takes ${expectation(field) || 'another number of choices'} (${count} picked)`,
        };
      return values as string[];
    }
    default: {
      if (field.minLength !== undefined && text.length < field.minLength) return wanted();
      if (field.maxLength !== undefined && text.length > field.maxLength) return wanted();
      if (field.format && !FORMATS[field.format](text)) return wanted();
      return text;
    }
  }
}

const FORMATS: Record<NonNullable<ElicitField['format']>, (text: string) => boolean> = {
  email: (text) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text),
  uri: (text) => /^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(text),
  date: (text) => /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)),
  'date-time': (text) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) && !Number.isNaN(Date.parse(text)),
};

/** A URL-mode ask as one question: the person opens the link, finishes there, and says so. */
export function urlQuestion(ask: Extract<ElicitAsk, { mode: 'url' }>): Question {
  return {
    label: 'Done',
    prompt: `Open ${ask.url} and finish there, then answer Done.`.slice(0, 1_000),
    options: [{ label: 'Done' }],
    multi_select: false,
    allow_custom: false,
    required: true,
  };
}

/** How the answers read in the tool's result for the model (values, not the person's labels). */
export function describeReply(reply: ElicitReply, by: string): string {
  if (reply.action !== 'accept') return `@${by} declined the server's question`;
  return `@${by} answered the server's question${reply.content && Object.keys(reply.content).length ? `: ${JSON.stringify(reply.content)}` : ''}`;
}

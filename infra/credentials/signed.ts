/**
 * Signed, expiring tokens for the sign-in flow: the Connect link's ticket (who connects which provider)
 * and the OAuth `state` (which flow this callback belongs to). HMAC-SHA256 with a key derived from the
 * vault key; compared in constant time. They carry ids only, never a secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

const ticketSchema = z.strictObject({
  u: z.string().min(1).max(128),
  p: z.string().min(1).max(32),
  e: z.number(),
  c: z.enum(['web', 'chat', 'form']).optional(),
  n: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,64}$/)
    .optional(),
});
/**
 * Where a Connect link was shown decides how it proves its opener: `web` links need the named person's web
 * sign-in; `chat` links (shown only to the clicker, ephemerally) and `form` tickets (the API key form) are
 * single-use by their nonce and short-lived.
 */
export type TicketChannel = 'web' | 'chat' | 'form';
export type Ticket = {
  userId: string;
  provider: string;
  expiresAt: number;
  channel?: TicketChannel | undefined;
  nonce?: string | undefined;
};

function mac(key: Buffer, purpose: string, body: string): string {
  return createHmac('sha256', key).update(`${purpose}.${body}`).digest('base64url');
}

function sign(key: Buffer, purpose: string, payload: unknown): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(key, purpose, body)}`;
}

type Verified<T> = { ok: true; value: T } | { ok: false; reason: 'invalid' | 'expired' };

function verify(key: Buffer, purpose: string, token: string): Verified<unknown> {
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined || token.length > 2_000)
    return { ok: false, reason: 'invalid' };
  const expected = Buffer.from(mac(key, purpose, body));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return { ok: false, reason: 'invalid' };
  try {
    return { ok: true, value: JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) };
  } catch {
    return { ok: false, reason: 'invalid' };
  }
}

export function signTicket(key: Buffer, ticket: Ticket): string {
  return sign(key, 'ticket', {
    u: ticket.userId,
    p: ticket.provider,
    e: ticket.expiresAt,
    ...(ticket.channel ? { c: ticket.channel } : {}),
    ...(ticket.nonce ? { n: ticket.nonce } : {}),
  });
}

export function verifyTicket(key: Buffer, token: string, now = Date.now()): Verified<Ticket> {
  const checked = verify(key, 'ticket', token);
  if (!checked.ok) return checked;
  const parsed = ticketSchema.safeParse(checked.value);
  if (!parsed.success) return { ok: false, reason: 'invalid' };
  if (parsed.data.e < now) return { ok: false, reason: 'expired' };
  const { u, p, e, c, n } = parsed.data;
  return { ok: true, value: { userId: u, provider: p, expiresAt: e, channel: c, nonce: n } };
}

const stateSchema = z.strictObject({ f: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/), e: z.number() });

export function signState(key: Buffer, flowId: string, expiresAt: number): string {
  return sign(key, 'state', { f: flowId, e: expiresAt });
}

export function verifyState(key: Buffer, token: string, now = Date.now()): Verified<{ flowId: string }> {
  const checked = verify(key, 'state', token);
  if (!checked.ok) return checked;
  const parsed = stateSchema.safeParse(checked.value);
  if (!parsed.success) return { ok: false, reason: 'invalid' };
  if (parsed.data.e < now) return { ok: false, reason: 'expired' };
  return { ok: true, value: { flowId: parsed.data.f } };
}

const webSessionSchema = z.strictObject({
  u: z.string().min(1).max(128),
  e: z.number(),
  /** What the session is bound to: the local secret's fingerprint, or the sign-in provider's name. */
  b: z.string().min(1).max(64),
});
export type WebSession = { userId: string; expiresAt: number; binding: string };

/** The web chat's session cookie: who is signed in, until when, and what the sign-in is bound to. */
export function signWebSession(key: Buffer, session: WebSession): string {
  return sign(key, 'web-session', { u: session.userId, e: session.expiresAt, b: session.binding });
}

export function verifyWebSession(key: Buffer, token: string, now = Date.now()): Verified<WebSession> {
  const checked = verify(key, 'web-session', token);
  if (!checked.ok) return checked;
  const parsed = webSessionSchema.safeParse(checked.value);
  if (!parsed.success) return { ok: false, reason: 'invalid' };
  if (parsed.data.e < now) return { ok: false, reason: 'expired' };
  return { ok: true, value: { userId: parsed.data.u, expiresAt: parsed.data.e, binding: parsed.data.b } };
}

const loginFlowSchema = z.strictObject({
  s: z.string().min(16).max(64),
  n: z.string().min(16).max(64),
  v: z.string().min(43).max(128),
  e: z.number(),
});
export type LoginFlow = { state: string; nonce: string; verifier: string; expiresAt: number };

/** A web sign-in in progress, kept in the browser's own short-lived cookie (nothing kept server-side). */
export function signLoginFlow(key: Buffer, flow: LoginFlow): string {
  return sign(key, 'login-flow', { s: flow.state, n: flow.nonce, v: flow.verifier, e: flow.expiresAt });
}

export function verifyLoginFlow(key: Buffer, token: string, now = Date.now()): Verified<LoginFlow> {
  const checked = verify(key, 'login-flow', token);
  if (!checked.ok) return checked;
  const parsed = loginFlowSchema.safeParse(checked.value);
  if (!parsed.success) return { ok: false, reason: 'invalid' };
  if (parsed.data.e < now) return { ok: false, reason: 'expired' };
  const { s, n, v, e } = parsed.data;
  return { ok: true, value: { state: s, nonce: n, verifier: v, expiresAt: e } };
}

const gateLinkSchema = z.strictObject({
  w: z.string().min(1).max(200),
  g: z.string().min(1).max(100),
  u: z.string().min(1).max(128),
  e: z.number(),
  n: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
});
/**
 * A gate's e-mailed link: which conversation and gate, whom it was sent to, until when, and a nonce that makes it
 * single-use (the vault's used tickets). It names; it never decides: only a POST from its page, signed in, does.
 */
export type GateLink = {
  workflowId: string;
  gateId: string;
  userId: string;
  expiresAt: number;
  nonce: string;
};

export function signGateLink(key: Buffer, link: GateLink): string {
  return sign(key, 'gate-link', {
    w: link.workflowId,
    g: link.gateId,
    u: link.userId,
    e: link.expiresAt,
    n: link.nonce,
  });
}

export function verifyGateLink(key: Buffer, token: string, now = Date.now()): Verified<GateLink> {
  const checked = verify(key, 'gate-link', token);
  if (!checked.ok) return checked;
  const parsed = gateLinkSchema.safeParse(checked.value);
  if (!parsed.success) return { ok: false, reason: 'invalid' };
  if (parsed.data.e < now) return { ok: false, reason: 'expired' };
  const { w, g, u, e, n } = parsed.data;
  return { ok: true, value: { workflowId: w, gateId: g, userId: u, expiresAt: e, nonce: n } };
}

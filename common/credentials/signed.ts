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
});
export type Ticket = { userId: string; provider: string; expiresAt: number };

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
  return sign(key, 'ticket', { u: ticket.userId, p: ticket.provider, e: ticket.expiresAt });
}

export function verifyTicket(key: Buffer, token: string, now = Date.now()): Verified<Ticket> {
  const checked = verify(key, 'ticket', token);
  if (!checked.ok) return checked;
  const parsed = ticketSchema.safeParse(checked.value);
  if (!parsed.success) return { ok: false, reason: 'invalid' };
  if (parsed.data.e < now) return { ok: false, reason: 'expired' };
  return { ok: true, value: { userId: parsed.data.u, provider: parsed.data.p, expiresAt: parsed.data.e } };
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

/**
 * Operator claims: what makes `operator: true` on a decision or a stop believable. Anyone who reaches Temporal's
 * frontend can send a signal, so the flag alone proves nothing; `agentctl` signs each operator action with the
 * operator key (OPERATOR_KEY, or DATA_DIR/operator-key created on first use, owner-only) and the worker checks the
 * signature in a local activity before the workflow accepts it. The claim names the action exactly (which gate or
 * conversation, which choice, which operator) and expires after a few minutes; it carries no secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadOrCreateSecret } from './secret-file';

export const OPERATOR_KEY_FILE = 'operator-key';
/** How long a signed operator action stays valid: enough for a signal to arrive, not for a later replay. */
export const CLAIM_TTL_MS = 10 * 60_000;

export interface OperatorAction {
  kind: 'decide' | 'stop';
  /** The gate decided, or the conversation's workflow id stopped. */
  target: string;
  /** approve | deny, for a decision. */
  choice?: string | undefined;
  operator: string;
}

export interface OperatorClaim {
  issuedAt: number;
  mac: string;
}

/** The worker's key: OPERATOR_KEY, else DATA_DIR/operator-key (created on first use). */
export function loadOperatorKey(dataDir: string, explicit: string | undefined): string {
  return loadOrCreateSecret(dataDir, OPERATOR_KEY_FILE, explicit);
}

/**
 * agentctl's key: OPERATOR_KEY, else the worker's DATA_DIR/operator-key. Never created here: a key made where no
 * worker reads it would sign actions every worker refuses.
 */
export function readOperatorKey(dataDir: string, explicit: string | undefined): string {
  if (explicit) return explicit;
  const file = path.join(dataDir, OPERATOR_KEY_FILE);
  if (!existsSync(file))
    throw new Error(
      `no operator key: set OPERATOR_KEY to the worker's, or run agentctl with the worker's DATA_DIR (${file} does not exist)`,
    );
  return loadOrCreateSecret(dataDir, OPERATOR_KEY_FILE, undefined);
}

function mac(key: string, action: OperatorAction, issuedAt: number): string {
  const body = [action.kind, action.target, action.choice ?? '', action.operator, String(issuedAt)].join(
    '\n',
  );
  return createHmac('sha256', key).update(`operator.${body}`).digest('base64url');
}

export function signOperatorClaim(key: string, action: OperatorAction, now = Date.now()): OperatorClaim {
  return { issuedAt: now, mac: mac(key, action, now) };
}

export type ClaimVerdict = { ok: true } | { ok: false; reason: string };

export function verifyOperatorClaim(
  key: string,
  action: OperatorAction,
  claim: OperatorClaim | undefined,
  now = Date.now(),
): ClaimVerdict {
  if (!claim) return { ok: false, reason: 'it carries no operator signature (agentctl signs its own)' };
  const expected = Buffer.from(mac(key, action, claim.issuedAt));
  const given = Buffer.from(claim.mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return { ok: false, reason: 'its operator signature does not match (another key, or another action)' };
  if (Math.abs(now - claim.issuedAt) > CLAIM_TTL_MS)
    return { ok: false, reason: 'its operator signature has expired' };
  return { ok: true };
}

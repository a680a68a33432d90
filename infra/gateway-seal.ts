/**
 * Gateway seals: what makes a signal that speaks for a person believable. Anyone who reaches Temporal's frontend
 * can send a signal naming any `userId`, so the name alone proves nothing. The gateway, which signed the person
 * in (web sign-in, Slack's and Discord's request signatures), seals every signal that acts in a person's name
 * (a message, a decision, an answer, a draft that completes one) with the gateway key; the worker checks the seal
 * in a local activity before the workflow believes the signal, and refuses and tells what has none.
 *
 * The seal is a MAC over the signal's name, the workflow it is addressed to, its time and the whole payload (the
 * SHA-256 of its canonical JSON, common/seal-digest.ts): a seal copied onto another conversation, another gate, another choice, other arguments or
 * another person does not match. It travels as the signal's second argument, which workflows of earlier versions
 * ignore, so a deploy never strands a click. It carries no secret.
 */
import { createHmac } from 'node:crypto';
import { payloadDigest } from '../common/seal-digest';
import { sameSecret } from './same-secret';
import { loadOrCreateSecret } from './secret-file';

export const GATEWAY_KEY_FILE = 'gateway-key';

/** The signals that act in a person's name, sealed by the gateway and checked by the worker. */
export const SEALED_SIGNALS = [
  'userMessage',
  'decide',
  'answer',
  'answerDraft',
  'revokeGrant',
  'revokeUserGrant',
  'credentialChange',
  // A mission's changes, sent by the mission tools in the worker in its owner's name.
  'pause',
  'resume',
  'complete',
  'updateMission',
] as const;
/** The sealed signals a conversation passes on to a mission run (sealed afresh for it by the worker). */
export const FORWARDED_SIGNALS: readonly SealedSignal[] = ['decide', 'answer', 'answerDraft'];
export type SealedSignal = (typeof SEALED_SIGNALS)[number];

export function isSealedSignal(name: string): name is SealedSignal {
  return (SEALED_SIGNALS as readonly string[]).includes(name);
}

/**
 * How long a seal stays believable between the click and the worker's check: the check usually follows within
 * seconds, but signals wait in the server while no worker runs, so a long outage must not refuse what people
 * did during it. Within the window a seal is believed once (the workflow remembers those it used).
 */
export const SEAL_TTL_MS = 3 * 24 * 3_600_000;
/** A gateway's clock may run ahead of the worker's by this much. */
export const SEAL_CLOCK_SKEW_MS = 5 * 60_000;

export interface GatewaySeal {
  issuedAt: number;
  mac: string;
}

export interface SealedCall {
  signal: string;
  /** The workflow id the signal is addressed to. */
  to: string;
  /** payloadDigest of the signal's payload (common/seal-digest.ts). */
  digest: string;
}

/** The call a gateway seals: its payload's digest taken here. */
export function sealedCall(signal: string, to: string, payload: unknown): SealedCall {
  return { signal, to, digest: payloadDigest(payload) };
}

/** The gateway's and the worker's key: GATEWAY_KEY, else DATA_DIR/gateway-key (created on first use, owner-only). */
export function loadGatewayKey(dataDir: string, explicit: string | undefined): string {
  return loadOrCreateSecret(dataDir, GATEWAY_KEY_FILE, explicit);
}

function mac(key: string, call: SealedCall, issuedAt: number): string {
  return createHmac('sha256', key)
    .update(['gateway-seal.v1', call.signal, call.to, String(issuedAt), call.digest].join('\n'))
    .digest('base64url');
}

export function sealSignal(key: string, call: SealedCall, now = Date.now()): GatewaySeal {
  return { issuedAt: now, mac: mac(key, call, now) };
}

export type SealVerdict = { ok: true; via?: string } | { ok: false; reason: string };

/**
 * Where a sealed decision or answer was made (`via`) travels beside the seal, outside the payload it covers (workflows
 * of earlier versions refuse a new field in a decision). Its own MAC binds it to that one seal: a copy of the seal
 * sent with another place does not carry a place the workflow believes.
 */
export function originMac(key: string, sealMac: string, via: string): string {
  return createHmac('sha256', key).update(['gateway-origin.v1', sealMac, via].join('\n')).digest('base64url');
}

/** The place told with a seal, when its MAC matches that seal; undefined otherwise. */
export function verifiedVia(
  key: string,
  seal: GatewaySeal,
  origin: { via?: unknown; mac?: unknown } | undefined,
): string | undefined {
  if (typeof origin?.via !== 'string' || typeof origin.mac !== 'string') return undefined;
  return sameSecret(origin.mac, originMac(key, seal.mac, origin.via)) ? origin.via : undefined;
}

/** A seal's check (a signal without one never gets here: the workflow refuses it itself, seal-check.ts). */
export function verifySeal(key: string, call: SealedCall, seal: GatewaySeal, now = Date.now()): SealVerdict {
  if (!sameSecret(seal.mac, mac(key, call, seal.issuedAt)))
    return {
      ok: false,
      reason:
        'its gateway signature does not match (altered, meant for another conversation or gate, or signed with another key: the gateway and the worker must share GATEWAY_KEY)',
    };
  if (seal.issuedAt > now + SEAL_CLOCK_SKEW_MS)
    return { ok: false, reason: 'its gateway signature is dated in the future' };
  if (now - seal.issuedAt > SEAL_TTL_MS)
    return { ok: false, reason: 'its gateway signature is older than three days' };
  return { ok: true };
}

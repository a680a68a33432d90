/**
 * A signal in a person's name, believed only with a seal the worker checks (infra/gateway-seal.ts), each seal once:
 * the person's directory (revocations, credential changes) and a mission (its owner's changes) keep one of these,
 * carried across continue-as-new until its seals expire, so a sealed signal copied from a history is not believed
 * again, after a forced hand-over too. (A conversation's own door is seal-check.ts: it also orders and refuses.)
 */
import { payloadDigest } from '../common/seal-digest';
import { gatewaySealSchema } from './session/contract';
import { verifyGatewaySeals } from './session/session-activities';

/** A gateway seal's lifetime and clock skew (infra/gateway-seal.ts): a used seal is remembered this long. */
const SEAL_MEMORY_MS = 3 * 24 * 3_600_000 + 5 * 60_000;

export class SealedWord {
  /** Seals believed: MAC → when made. */
  private readonly used: Map<string, number>;

  constructor(carried: readonly [string, number][] | undefined) {
    this.used = new Map((carried ?? []).filter(([, issuedAt]) => Date.now() - issuedAt <= SEAL_MEMORY_MS));
  }

  /** Whether `seal` is a good seal of this signal and payload for this workflow, not believed before. */
  async believe(signal: string, payload: unknown, seal: unknown): Promise<boolean> {
    const sealed = gatewaySealSchema.safeParse(seal);
    if (!sealed.success || this.used.has(sealed.data.mac)) return false;
    this.used.set(sealed.data.mac, sealed.data.issuedAt);
    const [verdict] = await verifyGatewaySeals({
      items: [{ signal, digest: payloadDigest(payload), seal: sealed.data }],
    }).catch(() => [undefined]);
    if (verdict?.ok) return true;
    // Not this seal's use: a forged copy does not spend the real one.
    this.used.delete(sealed.data.mac);
    return false;
  }

  /** What the next run remembers (none: nothing to carry). */
  carry(): [string, number][] | undefined {
    return this.used.size ? [...this.used.entries()] : undefined;
  }
}

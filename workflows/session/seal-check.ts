/**
 * The session's door for signals in a person's name (a message, a decision, an answer, a completing draft): each is
 * applied only once the worker has checked its gateway seal (infra/gateway-seal.ts), and in the order they arrived.
 * Signals that arrive together are checked in one activity; a signal without a good seal changes nothing and is told
 * to the person it names.
 *
 * The check is an ordinary activity, not a local one: a local activity in the path of every message lets a query
 * that lands inside a workflow task change where its result is recorded, and such a history no longer replays
 * (test/e2e/live-view.test.ts reads views during every turn to catch exactly that).
 */
import * as wf from '@temporalio/workflow';
import { payloadDigest } from '../../common/seal-digest';
import { gatewaySealSchema, signalOriginSchema } from './contract';
import { isDecisionSurface, type DecisionSurface } from '../../common/chat-ids';
import { decisionRefused } from './gate-metrics';
import { failureMessage, verifyGatewaySeals } from './session-activities';

/** A gateway seal's lifetime and clock skew (infra/gateway-seal.ts SEAL_TTL_MS, SEAL_CLOCK_SKEW_MS). */
const SEAL_TTL_MS = 3 * 24 * 3_600_000;
const SEAL_CLOCK_SKEW_MS = 5 * 60_000;

export type SealedSignalName = 'userMessage' | 'decide' | 'answer' | 'answerDraft';
type Verdict = { ok: true; via?: string } | { ok: false; reason: string };

export interface Arrival {
  signal: SealedSignalName;
  /** The payload exactly as it arrived (the seal covers it, not the parsed copy). */
  payload: unknown;
  seal: unknown;
  /** Where it was made, as the gateway told it beside the seal (believed only with its own MAC over the seal). */
  origin?: unknown;
  /** Who the signal names, told when it is refused. */
  userId: string;
  /** "A message", "A decision", "An answer": how a refusal names it. */
  what: string;
  /** Applies it; `via`: where it was made, when the gateway told it and its MAC matched. */
  apply: (via?: DecisionSurface) => void;
}

interface Waiting extends Arrival {
  settle: (error?: unknown) => void;
}

export class SealCheck {
  private readonly queue: Waiting[] = [];
  private pumping = false;
  /** Signals arrived and not yet applied or refused, by signal name. */
  private readonly waitingBy = new Map<SealedSignalName, number>();
  /** Seals already believed, by MAC, with when they were made: each is believed once within its lifetime. */
  private readonly used = new Map<string, number>();

  constructor(private readonly refuse: (text: string, userId: string) => void) {}

  /** Seals believed by the run before this one (carried across continue-as-new): still believed only once. */
  remember(used: readonly [string, number][] | undefined): void {
    for (const [mac, issuedAt] of used ?? []) this.used.set(mac, issuedAt);
    this.forgetExpired();
  }

  /** What the next run must remember: the seals believed that have not expired. */
  carry(): [string, number][] {
    this.forgetExpired();
    return [...this.used.entries()];
  }

  /** Resolves once the signal was applied or refused (the handler waits for it, so a hand-over waits too). */
  admit(arrival: Arrival): Promise<void> {
    this.count(arrival.signal, 1);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({
        ...arrival,
        settle: (error) => {
          this.count(arrival.signal, -1);
          if (error === undefined) resolve();
          else reject(error);
        },
      });
      if (!this.pumping) void this.pump();
    });
  }

  /** Signals of this name (all of them without one) that arrived and wait for their check. */
  waiting(signal?: SealedSignalName): number {
    if (signal) return this.waitingBy.get(signal) ?? 0;
    let all = 0;
    for (const n of this.waitingBy.values()) all += n;
    return all;
  }

  private count(signal: SealedSignalName, by: number): void {
    this.waitingBy.set(signal, (this.waitingBy.get(signal) ?? 0) + by);
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0);
        const verdicts = await this.check(batch);
        batch.forEach((arrival, i) => {
          try {
            const verdict = verdicts[i]!;
            if (verdict.ok)
              arrival.apply(verdict.via && isDecisionSurface(verdict.via) ? verdict.via : undefined);
            else {
              decisionRefused('seal', arrival.signal);
              wf.log.warn('unsealed signal refused', {
                signal: arrival.signal,
                userId: arrival.userId,
                reason: verdict.reason,
              });
              this.refuse(
                `${arrival.what} in your name was refused: ${verdict.reason}. Nothing changed.`,
                arrival.userId,
              );
            }
            arrival.settle();
          } catch (error) {
            arrival.settle(error ?? new Error('applying a signal failed'));
          }
        });
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Never rejects (the pump is not awaited): the activity's failure refuses the batch and says why; the rest is pure
   * work on decoded JSON. (Its awaits are part of the command order recorded histories replay: keep them as they are.)
   */
  private async check(batch: Waiting[]): Promise<Verdict[]> {
    this.forgetExpired();
    const verdicts: (Verdict | undefined)[] = [];
    const asked: { index: number; mac: string; issuedAt: number }[] = [];
    const inBatch = new Set<string>();
    const items = batch.flatMap((arrival, index) => {
      if (arrival.seal === undefined) {
        verdicts[index] = {
          ok: false,
          reason: 'it was not signed by a gateway (only the gateway that signed you in speaks for you)',
        };
        return [];
      }
      const seal = gatewaySealSchema.safeParse(arrival.seal);
      if (!seal.success) {
        verdicts[index] = { ok: false, reason: 'its gateway signature is malformed' };
        return [];
      }
      // Single use: a seal believed before is not believed again (a signal copied from history and re-sent).
      if (this.used.has(seal.data.mac) || inBatch.has(seal.data.mac)) {
        verdicts[index] = { ok: false, reason: 'its gateway signature was already used once' };
        return [];
      }
      inBatch.add(seal.data.mac);
      asked.push({ index, mac: seal.data.mac, issuedAt: seal.data.issuedAt });
      // Only the payload's digest goes to the check: the payload is in history once already.
      const origin = signalOriginSchema.safeParse(arrival.origin);
      return [
        {
          signal: arrival.signal,
          digest: payloadDigest(arrival.payload),
          seal: seal.data,
          ...(origin.success ? { origin: origin.data } : {}),
        },
      ];
    });
    if (items.length) {
      let answers: Verdict[];
      try {
        answers = await verifyGatewaySeals({ items });
      } catch (error) {
        const reason = `its signature could not be checked (${failureMessage(error)}); send it again`;
        answers = items.map(() => ({ ok: false, reason }));
      }
      asked.forEach(({ index, mac, issuedAt }, i) => {
        const verdict = answers[i] ?? { ok: false, reason: 'its signature was not checked' };
        verdicts[index] = verdict;
        if (verdict.ok) this.used.set(mac, issuedAt);
      });
    }
    return verdicts.map((v) => v ?? { ok: false, reason: 'its signature was not checked' });
  }

  /** A seal older than its lifetime is refused by the check anyway: it need not be remembered. */
  private forgetExpired(): void {
    for (const [mac, issuedAt] of this.used)
      if (Date.now() - issuedAt > SEAL_TTL_MS + SEAL_CLOCK_SKEW_MS) this.used.delete(mac);
  }
}

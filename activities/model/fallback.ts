/**
 * A model fallback chain (MODEL_FALLBACKS): the next model is tried only when the one before could not answer for
 * lack of capacity (429, 408, 5xx such as 503 and 529 "overloaded", a timeout or a connection failure), never
 * after a request error, a bad key, an unknown model or a refusal: those would fail the same way anywhere, and a
 * different model must not answer what the first one declined. Each model is tried once per attempt; when all of
 * them are out of capacity the attempt fails retryably, and Temporal's retry waits as long as the providers asked
 * (`retry-after`, as the failure's next retry delay), so a provider's bad hour costs a durable timer, not the
 * retry budget. Every reply says which model answered.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ModelReply } from '../types';
import type { CompleteFn } from './complete-fn';
import { modelUnavailable } from './classify-error';

export interface ModelLink {
  /** `provider:model`, as MODEL_FALLBACKS writes it and the transcript records it. */
  label: string;
  complete: CompleteFn;
}

/** What a retryable model failure carries (classify-error.ts): its HTTP status and the provider's retry-after. */
export interface CapacityDetails {
  status?: number;
  retryAfterMs?: number;
}

/** The failure says the model had no capacity (not that the request was wrong): the next one may answer. */
export function capacityOf(error: unknown): CapacityDetails | undefined {
  if (!(error instanceof ApplicationFailure) || error.type !== 'ModelUnavailable') return undefined;
  const details = (error.details?.[0] ?? {}) as CapacityDetails;
  // 409 (a conflict) is retried, but it is about the request, not the model's capacity.
  if (details.status === 409) return undefined;
  return details;
}

/** What the chain tells its owner (the log and the worker's metrics). */
export interface FallbackObserver {
  /** `from` could not answer for lack of capacity; `to` is asked next. */
  onFallback?: (from: string, to: string, error: Error, details: CapacityDetails) => void;
  /** A model failed (capacity or not; a call the caller cancelled is not a failure). */
  onFailure?: (model: string, error: Error) => void;
}

export function fallbackChain(links: readonly ModelLink[], observer: FallbackObserver = {}): CompleteFn {
  return async (transcript, signal, extraTools, onText, options) => {
    const only = options?.only;
    // A tool step goes on with the model that started it; one no longer configured leaves the chain as it is.
    const pinned = only === undefined ? undefined : links.find((link) => link.label === only);
    const tried = pinned ? [pinned] : links;
    const failures: { label: string; error: ApplicationFailure; details: CapacityDetails }[] = [];
    for (const link of tried) {
      try {
        const reply: ModelReply = await link.complete(transcript, signal, extraTools, onText, options);
        return { ...reply, model: link.label };
      } catch (error) {
        if (signal?.aborted) throw error;
        observer.onFailure?.(link.label, error as Error);
        const details = capacityOf(error);
        if (!details) throw error;
        failures.push({ label: link.label, error: error as ApplicationFailure, details });
        const next = tried[tried.indexOf(link) + 1];
        if (next) observer.onFallback?.(link.label, next.label, error as Error, details);
      }
    }
    if (failures.length === 1) throw failures[0]!.error;
    // All out of capacity: retried once the soonest of them said it would answer (none said: the usual backoff).
    const waits = failures.map((f) => f.details.retryAfterMs);
    const soonest = waits.every((w) => w !== undefined) ? Math.min(...(waits as number[])) : undefined;
    throw modelUnavailable(
      `no model could answer: ${failures.map((f) => `${f.label}: ${f.error.message}`).join('; ')}`,
      soonest !== undefined ? { retryAfterMs: soonest } : {},
    );
  };
}

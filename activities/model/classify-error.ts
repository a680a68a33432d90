/**
 * Turns a model API failure into what Temporal should do with it: 429, 5xx and network errors are
 * retried with backoff by the activity's retry policy; a bad key, an unknown model or a malformed request
 * fail at once with a typed, plain-language failure the user is shown.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../common/errors';

/**
 * How the providers word "the prompt is longer than the context window": OpenAI (and compatible servers such as
 * vLLM) answer 400 with code `context_length_exceeded` / "maximum context length is N tokens"; Anthropic answers
 * 400 invalid_request_error "prompt is too long: N tokens > M maximum".
 */
const CONTEXT_TOO_LONG = /context_length_exceeded|maximum context length|prompt is too long|context window/i;

export function classifyModelError(
  provider: string,
  model: string,
  status: number | undefined,
  message: string,
  /** The provider's `retry-after` (or `retry-after-ms`), when it sent one. */
  retryAfterMs?: number,
): Error {
  if (status === 401 || status === 403) {
    const key = provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
    return ApplicationFailure.nonRetryable(
      `the ${provider} API rejected the key (HTTP ${status}): check ${key}`,
      FailureType.ModelAuth,
    );
  }
  if (status === 404) {
    return ApplicationFailure.nonRetryable(
      `the ${provider} API does not know the model "${model}" (HTTP 404): check MODEL`,
      FailureType.ModelNotFound,
    );
  }
  if (status === 400 && CONTEXT_TOO_LONG.test(message)) {
    return ApplicationFailure.nonRetryable(
      `the ${provider} API says the request is longer than the model's context (HTTP 400): ${message}`,
      FailureType.ContextTooLong,
    );
  }
  if (
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    status !== 408 &&
    status !== 409 &&
    status !== 429
  ) {
    return ApplicationFailure.nonRetryable(
      `the ${provider} API refused the request (HTTP ${status}): ${message}`,
      FailureType.ModelBadRequest,
    );
  }
  // Retried (and, with MODEL_FALLBACKS, passed to the next model): the status and the provider's wait go along.
  return modelUnavailable(
    `the ${provider} API is unavailable${status ? ` (HTTP ${status})` : ''}: ${message}`,
    { ...(status !== undefined ? { status } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
  );
}

/**
 * A wait longer than this is the conversation's to take, visibly (model-step.ts: a durable timer and a notice of
 * when), not an activity retry nobody sees: the failure is then final for the activity, and the workflow waits.
 */
export const LONG_RETRY_AFTER_MS = 30_000;

export function modelUnavailable(
  message: string,
  details: { status?: number; retryAfterMs?: number },
): Error {
  const long = details.retryAfterMs !== undefined && details.retryAfterMs > LONG_RETRY_AFTER_MS;
  return ApplicationFailure.create({
    type: 'ModelUnavailable',
    message,
    details: [details],
    nonRetryable: long,
    ...(details.retryAfterMs !== undefined && !long ? { nextRetryDelay: details.retryAfterMs } : {}),
  });
}

/** `retry-after-ms`, or `retry-after` as seconds or an HTTP date, in milliseconds from `now`; undefined if none. */
export function retryAfterOf(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

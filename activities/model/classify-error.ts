/**
 * Turns a model API failure into what Temporal should do with it: 429, 5xx and network errors are
 * retried with backoff by the activity's retry policy; a bad key, an unknown model or a malformed request
 * fail at once with a typed, plain-language failure the user is shown.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../common/errors';

export function classifyModelError(
  provider: string,
  model: string,
  status: number | undefined,
  message: string,
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
  return ApplicationFailure.retryable(
    `the ${provider} API is unavailable${status ? ` (HTTP ${status})` : ''}: ${message}`,
    'ModelUnavailable',
  );
}

/**
 * What the OpenAI and Anthropic providers share: how their SDK clients are set up, which tools the model is
 * offered, and one call that streams or not and turns the SDK's API errors into Temporal's terms.
 */
import { classifyModelError } from './classify-error';
import { toolSpecs, type ToolSpec } from './tool-specs';

/** Temporal owns retries (with backoff and a visible attempt count), so an SDK never retries on its own. */
export const SDK_CLIENT_OPTIONS = { maxRetries: 0, timeout: 240_000 } as const;

/** The built-in tools and the conversation's MCP tools, as one list in the provider's own shape. */
export function offeredTools<T>(extraTools: ToolSpec[], shape: (spec: ToolSpec) => T): T[] {
  return [...toolSpecs(), ...extraTools].map(shape);
}

/**
 * One model call: streamed when someone watches the text (`onText`), whole otherwise; the same final response
 * either way. An error the SDK raised as an API error (`apiError` recognises it) becomes retryable or not by
 * its status (classify-error.ts); anything else (a network failure, an abort) goes up as it is.
 */
export async function callProvider<R>(call: {
  provider: 'openai' | 'anthropic';
  model: string;
  signal: AbortSignal | undefined;
  onText: ((snapshot: string) => void) | undefined;
  streamed: (
    requestOptions: { signal: AbortSignal } | undefined,
    onText: (snapshot: string) => void,
  ) => Promise<R>;
  whole: (requestOptions: { signal: AbortSignal } | undefined) => Promise<R>;
  apiError: (
    error: unknown,
  ) => { status: number | undefined; message: string; retryAfterMs?: number } | undefined;
}): Promise<R> {
  const requestOptions = call.signal ? { signal: call.signal } : undefined;
  try {
    return call.onText ? await call.streamed(requestOptions, call.onText) : await call.whole(requestOptions);
  } catch (error) {
    const known = call.apiError(error);
    if (known)
      throw classifyModelError(call.provider, call.model, known.status, known.message, known.retryAfterMs);
    throw error;
  }
}

/**
 * What a caller may read of a failure: A2A's own errors and the gateway's words for an unreachable Temporal pass as
 * they are; anything else (an unexpected Temporal or gRPC error, a parser's complaint) is logged here and told as one
 * fixed sentence, so no internal detail leaves the gateway.
 */
import { A2AError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Logger } from '../../infra/log';

const FAILED = 'the call failed on the gateway; try again';

export function guarded(inner: A2ARequestHandler, spoken: readonly string[], log: Logger): A2ARequestHandler {
  const clean = (error: unknown): never => {
    if (error instanceof A2AError) throw error;
    if (error instanceof Error && spoken.includes(error.message)) throw error;
    log.warn('a2a call failed', { error: error instanceof Error ? error.message : String(error) });
    throw new Error(FAILED);
  };
  return new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result && typeof (result as AsyncGenerator)[Symbol.asyncIterator] === 'function')
          return (async function* () {
            try {
              yield* result as AsyncGenerator;
            } catch (error) {
              clean(error);
            }
          })();
        return Promise.resolve(result).catch(clean);
      };
    },
  });
}

/**
 * The gateway's client seals every signal that acts in a person's name (infra/gateway-seal.ts) on its way out,
 * whichever route sends it (a chat platform, the web chat, the inbox, a channel added later): the seal is added
 * here, once, not by each caller.
 */
import { Client, type ClientInterceptors, type WorkflowClientInterceptor } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { isSealedSignal, originMac, sealedCall, sealSignal } from '../gateway-seal';

export function sealingInterceptor(key: string): WorkflowClientInterceptor {
  /**
   * The signal's arguments with the seal after its payload (in the place its caller left empty, before where it was
   * made); any other signal's (or one sealed already) as they are.
   */
  const sealed = (signal: string, to: string, args: unknown[]): unknown[] => {
    if (!isSealedSignal(signal) || args.length < 1 || args[1] !== undefined) return args;
    const seal = sealSignal(key, sealedCall(signal, to, args[0]));
    // Where it was made, when told, bound to this seal by a MAC of its own (gateway-seal.ts originMac).
    const origin = args[2] as { via?: unknown } | undefined;
    const place =
      typeof origin?.via === 'string' ? [{ via: origin.via, mac: originMac(key, seal.mac, origin.via) }] : [];
    return [args[0], seal, ...place, ...args.slice(3)];
  };
  return {
    async signal(input, next) {
      return await next({
        ...input,
        args: sealed(input.signalName, input.workflowExecution.workflowId, input.args),
      });
    },
    async signalWithStart(input, next) {
      return await next({
        ...input,
        signalArgs: sealed(input.signalName, input.options.workflowId, input.signalArgs),
      });
    },
  };
}

/** The interceptors a gateway's client runs: its own tracing ones (if any), then the seal. */
export function withSealing(key: string, interceptors: ClientInterceptors = {}): ClientInterceptors {
  const workflow = interceptors.workflow;
  if (workflow && !Array.isArray(workflow))
    throw new Error('the gateway seals signals with a list of workflow client interceptors');
  return { ...interceptors, workflow: [...(workflow ?? []), sealingInterceptor(key)] };
}

/** The same connection as `client`, sealing as a gateway does: for tests and benchmarks that play a gateway. */
export function sealingClient(client: Client, key: string, dataConverter?: DataConverter): Client {
  return new Client({
    connection: client.connection,
    namespace: client.options.namespace,
    ...(dataConverter ? { dataConverter } : {}),
    interceptors: withSealing(key, client.options.interceptors),
  });
}

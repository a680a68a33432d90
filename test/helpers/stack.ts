/** A whole system for a test: real worker and gateway processes against a real Temporal server. */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { testEnv } from './config';
import {
  freePort,
  gatewayProcess,
  gatewayReady,
  workerProcess,
  workerReady,
  type ManagedProcess,
} from './processes';
import { WebClient } from './web-client';

export interface Stack {
  env: Record<string, string>;
  worker: ManagedProcess;
  gateway: ManagedProcess;
  web: WebClient;
  port: number;
  restartWorker(): Promise<void>;
  restartGateway(): Promise<void>;
  stop(): Promise<void>;
}

export async function startStack(options: {
  temporalAddress: string;
  policy?: Record<string, unknown>;
  env?: Record<string, string>;
}): Promise<Stack> {
  const port = await freePort();
  const env = testEnv(options.policy ?? {}, {
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_TASK_QUEUE: `e2e-${randomUUID()}`,
    TEMPORAL_UI_URL: 'http://localhost:8233',
    PORT: String(port),
    WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    LOG_LEVEL: 'info',
    ...options.env,
  });
  const stack: Stack = {
    env,
    port,
    worker: workerProcess(env),
    gateway: gatewayProcess(env),
    web: new WebClient(`http://127.0.0.1:${port}`),
    async restartWorker() {
      await stack.worker.kill('SIGKILL');
      stack.worker = workerProcess(env);
      await stack.worker.start(workerReady);
    },
    async restartGateway() {
      await stack.gateway.kill('SIGKILL');
      stack.gateway = gatewayProcess(env);
      await stack.gateway.start(gatewayReady(port));
    },
    async stop() {
      await Promise.all([stack.worker.kill('SIGTERM'), stack.gateway.kill('SIGTERM')]);
    },
  };
  await Promise.all([stack.worker.start(workerReady), stack.gateway.start(gatewayReady(port))]);
  return stack;
}

/** A whole system for a test: real worker and gateway processes against a real Temporal server. */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
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
  /** The last lines each process printed: context for a test that timed out waiting on them. */
  logTail(chars?: number): string;
}

export async function startStack(options: {
  temporalAddress: string;
  policy?: Record<string, unknown>;
  env?: Record<string, string>;
  /** The gateway's port, when something must know it in advance (an OpenID provider's redirect URI). */
  port?: number;
}): Promise<Stack> {
  const port = options.port ?? (await freePort());
  // Unless a test chooses its web mode, the gateway sits behind a "proxy" on loopback that names the user,
  // so tests can act as several people; test/security covers every mode itself.
  const chosen = options.env && ('WEB_LOGIN' in options.env || 'WEB_TRUSTED_USER_HEADER' in options.env);
  const web: Record<string, string> = chosen
    ? {}
    : { WEB_TRUSTED_USER_HEADER: 'x-forwarded-user', WEB_TRUSTED_PROXIES: '127.0.0.1/32,::1/128' };
  const env = testEnv(options.policy ?? {}, {
    ...web,
    // Tests send bursts; the rate limit has its own test.
    WEB_RATE_MESSAGES: '100000',
    WEB_RATE_SESSIONS: '100000',
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
    logTail(chars = 4_000) {
      return `\n--- worker (last ${chars} chars) ---\n${stack.worker.output.slice(-chars)}\n--- gateway ---\n${stack.gateway.output.slice(-chars)}`;
    },
  };
  await Promise.all([stack.worker.start(workerReady), stack.gateway.start(gatewayReady(port))]);
  if (!env.WEB_LOGIN && !env.WEB_TRUSTED_USER_HEADER)
    stack.web = new WebClient(`http://127.0.0.1:${port}`, {
      bearer: readFileSync(path.join(env.DATA_DIR!, 'web-token'), 'utf8').trim(),
    });
  return stack;
}

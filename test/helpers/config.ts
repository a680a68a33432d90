/** Configuration for tests: a fresh DATA_DIR and policy, never the developer's own agent.config.json. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type AppConfig } from '../../infra/config';

export function tempDir(prefix = 'agent-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Most suites test sign-ins, not approvals: a GET with a connected credential runs at once there, as an operator
 * who trusts reads configures it. The product's default asks first (test/security/consent.test.ts proves it);
 * a suite that sets any `http_request` policy of its own gets exactly that.
 */
const SIGNED_IN_READS = { when: [{ match: { method: ['GET', 'HEAD'], auth: '*' }, policy: 'auto' }] };

function withTestDefaults(policy: Record<string, unknown>): Record<string, unknown> {
  const tools = (policy.tools ?? {}) as Record<string, unknown>;
  return 'http_request' in tools ? policy : { ...policy, tools: { ...tools, http_request: SIGNED_IN_READS } };
}

/**
 * The gateway key of every test's gateway and worker (infra/gateway-seal.ts): a test that plays a gateway seals
 * with it (sealingClient); attacks use anything else, or nothing.
 */
export const TEST_GATEWAY_KEY = 'test-gateway-key-0123456789abcdefghijklmnopqrstuvwxyz';

/** Writes a policy file and returns environment variables that point a process at it. */
export function testEnv(
  policy: Record<string, unknown> = {},
  extra: Record<string, string> = {},
): Record<string, string> {
  const dataDir = tempDir();
  const policyFile = path.join(dataDir, 'agent.config.json');
  writeFileSync(policyFile, JSON.stringify(withTestDefaults(policy)));
  return {
    DATA_DIR: dataDir,
    AGENT_CONFIG: policyFile,
    MODEL_PROVIDER: 'scripted',
    // Whole answers at once: the tests that look at streaming set a pace (the product's default writes word by word).
    SCRIPTED_WORD_MS: '0',
    LOG_LEVEL: 'warn',
    GATEWAY_KEY: TEST_GATEWAY_KEY,
    // `TEST_WORKER_CACHE=0 npm test`: every workflow task replays the whole history (a hunt for non-determinism).
    ...(process.env.TEST_WORKER_CACHE ? { WORKER_MAX_CACHED_WORKFLOWS: process.env.TEST_WORKER_CACHE } : {}),
    ...extra,
  };
}

export function testConfig(
  policy: Record<string, unknown> = {},
  extra: Record<string, string> = {},
): AppConfig {
  return loadConfig(testEnv(policy, extra));
}

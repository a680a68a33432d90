/** Configuration for tests: a fresh DATA_DIR and policy, never the developer's own agent.config.json. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type AppConfig } from '../../infra/config';

export function tempDir(prefix = 'agent-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Writes a policy file and returns environment variables that point a process at it. */
export function testEnv(
  policy: Record<string, unknown> = {},
  extra: Record<string, string> = {},
): Record<string, string> {
  const dataDir = tempDir();
  const policyFile = path.join(dataDir, 'agent.config.json');
  writeFileSync(policyFile, JSON.stringify(policy));
  return {
    DATA_DIR: dataDir,
    AGENT_CONFIG: policyFile,
    MODEL_PROVIDER: 'scripted',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

export function testConfig(
  policy: Record<string, unknown> = {},
  extra: Record<string, string> = {},
): AppConfig {
  return loadConfig(testEnv(policy, extra));
}

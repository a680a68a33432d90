/** Bundles the workflow code once for the whole run; every worker in every test file reuses it. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflows } from '../../workers/workflow-code';
import type { TestProject } from 'vitest/node';
import { formatSummary, SUMMARY_FILE, type ChaosOutcome } from '../chaos/summary';

declare module 'vitest' {
  export interface ProvidedContext {
    workflowBundlePath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  rmSync(SUMMARY_FILE, { force: true });
  const code = await bundleWorkflows();
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'agent-bundle-')), 'workflows.js');
  writeFileSync(file, code);
  project.provide('workflowBundlePath', file);
  // After the run: the chaos scoreboard, when chaos scenarios ran.
  return () => {
    if (!existsSync(SUMMARY_FILE)) return;
    const outcomes = readFileSync(SUMMARY_FILE, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ChaosOutcome);
    process.stdout.write(`\nChaos and security summary\n${formatSummary(outcomes)}\n\n`);
  };
}

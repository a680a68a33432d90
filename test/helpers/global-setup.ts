/** Bundles the workflow code once for the whole run; every worker in every test file reuses it. */
import { writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    workflowBundlePath: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows/index.ts'),
  });
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'agent-bundle-')), 'workflows.js');
  writeFileSync(file, code);
  project.provide('workflowBundlePath', file);
}

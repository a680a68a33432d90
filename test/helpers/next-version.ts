/**
 * Version N+1 for deploy tests: today's workflow code with a changed command sequence (a one-millisecond timer
 * before every model call), bundled exactly as workers bundle it. Its histories differ from today's, so replaying
 * one version's history on the other fails with a nondeterminism error: what a careless deploy would hit.
 */
import { cpSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflows } from '../../workers/workflow-code';
import { buildIdOfBundle, type DeploymentVersion } from '../../infra/temporal/deployment';
import { testEnv } from './config';

const ROOT = path.resolve(__dirname, '../..');
/** The model call itself (model-step.ts `send`): version N+1 starts a one-millisecond timer first. */
const ANCHOR = '  return await callModel(request);';
const CHANGED = '  await wf.sleep(1);\n  return await callModel(request);';

export async function nextVersionBundle(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'next-version-'));
  cpSync(path.join(ROOT, 'workflows'), path.join(dir, 'workflows'), { recursive: true });
  cpSync(path.join(ROOT, 'common'), path.join(dir, 'common'), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const modelStep = path.join(dir, 'workflows/session/model-step.ts');
  const source = readFileSync(modelStep, 'utf8');
  if (!source.includes(ANCHOR))
    throw new Error('model-step.ts changed: update the anchor of test/helpers/next-version.ts');
  writeFileSync(modelStep, source.replace(ANCHOR, CHANGED));
  const file = path.join(dir, 'workflows-next.js');
  writeFileSync(file, await bundleWorkflows(path.join(dir, 'workflows')));
  return file;
}

/** Versions N and N+1 of the deployment named after its task queue, from their bundles. */
export function versionPair(
  taskQueue: string,
  bundleN: string,
  bundleN1: string,
): [DeploymentVersion, DeploymentVersion] {
  return [
    { deploymentName: taskQueue, buildId: buildIdOfBundle(bundleN) },
    { deploymentName: taskQueue, buildId: buildIdOfBundle(bundleN1) },
  ];
}

/** A versioned worker process's environment on this server and task queue ("worker started" is logged at info). */
export function deployWorkerEnv(
  temporalAddress: string,
  taskQueue: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return testEnv(
    {},
    { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'info', ...extra },
  );
}

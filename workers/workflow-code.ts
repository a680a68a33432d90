/**
 * The workflow code every worker runs, in one place: the session and mission workflows, from a prebuilt
 * bundle (`npm run bundle`) or bundled at start. Every worker, test and replay uses exactly this.
 *
 * No workflow interceptors are bundled, on purpose: the SDK's OpenTelemetry workflow interceptors add
 * awaits to signal handlers and activity scheduling, which reorders the session's timer cancellations;
 * the recorded-history replay test showed every existing session history failing to replay with them.
 * Tracing therefore covers clients and activities (see infra/telemetry.ts), and running sessions stay safe.
 */
import path from 'node:path';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../infra/telemetry';

// A directory: the bundler finds index.ts (source) or index.js (dist), also under test runners.
const workflowsPath = path.resolve(__dirname, '../workflows');

/** Worker options for the workflow code: from a prebuilt bundle when given, else bundled at start. */
export function workflowCode(
  bundlePath?: string,
  tracing?: Pick<Tracing, 'activity' | 'client'>,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'interceptors'> {
  return {
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath }),
    ...(tracing ? { interceptors: { activity: tracing.activity, client: tracing.client } } : {}),
  };
}

export async function bundleWorkflows(): Promise<string> {
  return (await bundleWorkflowCode({ workflowsPath })).code;
}

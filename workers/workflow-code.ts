/**
 * The workflow code every worker runs, in one place: the session and mission workflows plus the
 * OpenTelemetry workflow interceptors, bundled together (prebuilt with `npm run bundle`, or at start).
 * The interceptors are always in, so one bundle serves with tracing on or off: with tracing off, the span
 * sink they call is a no-op; with it on, that sink is the real exporter and the activity and client
 * interceptors join in.
 */
import path from 'node:path';
import { bundleWorkflowCode, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { Tracing } from '../common/telemetry';

// A directory: the bundler finds index.ts (source) or index.js (dist), also under test runners.
const workflowsPath = path.resolve(__dirname, '../workflows');
const workflowInterceptorModules = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

const noSpanExport: InjectedSinks<OpenTelemetrySinks> = {
  exporter: { export: { fn: () => {}, callDuringReplay: false } },
};

/** Worker options for the workflow code: from a prebuilt bundle when given, else bundled at start. */
export function workflowCode(
  bundlePath?: string,
  tracing?: Pick<Tracing, 'activity' | 'client' | 'sinks'>,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'interceptors' | 'sinks'> {
  return {
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath }),
    interceptors: {
      ...(bundlePath ? {} : { workflowModules: workflowInterceptorModules }),
      ...(tracing ? { activity: tracing.activity, client: tracing.client } : {}),
    },
    sinks: tracing?.sinks ?? noSpanExport,
  };
}

export async function bundleWorkflows(): Promise<string> {
  return (await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules })).code;
}

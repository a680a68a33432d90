/**
 * What one replay costs the worker (#20 goal 2): a parked workflow evicted from the cache is rebuilt from its
 * history before it can take a signal or answer a query. Replays a parked session (a recorded history cut where
 * it waits on a question) and a parked bare workflow many times in this process, with the SDK's own replayer,
 * and reports CPU per replay and the promises workflow code created (each records a stack trace in the SDK).
 * No server is involved: this is the worker's share of a resume, measured alone and without noise from the rest.
 *
 * Two costs the SDK adds to every replay are attributed here (#20 goal 2: what bounds the session's resume rate):
 * - each call into the workflow sandbox runs Node's `vm` with the SDK's 5 s isolate timeout, and Node starts and
 *   joins a watchdog thread for every such call (nodejs/node#47739): `sandboxCalls` per replay, `watchdogUs` each;
 * - each promise workflow code creates gets a stack trace recorded (for the Temporal UI's stack trace view):
 *   `withoutStackCaptureMs` is the same replay with that switched off, measured only to say what it costs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';

export interface ReplayCost {
  /** CPU milliseconds per replay (this process, every thread). */
  cpuMs: number;
  /** Promises created inside workflow contexts per replay. */
  promises: number;
  /** Workflow tasks in the replayed history. */
  workflowTasks: number;
  /** Calls into the workflow sandbox per replay (each one a `vm` run with the SDK's timeout). */
  sandboxCalls: number;
  /** CPU milliseconds per replay with the SDK's per-promise stack capture off (attribution only). */
  withoutStackCaptureMs?: number;
}

/** The SDK's per-promise stack capture, switched off and on again (internal API: undefined if it moved). */
interface StackCapture {
  off(): void;
  on(): void;
}

function stackCaptureSwitch(): StackCapture | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an SDK internal, for attribution only
    const { globalHandlers } = require('@temporalio/worker/lib/workflow/vm-shared') as {
      globalHandlers?: { stopPromiseHook?: () => void; setPromiseHook?: () => void };
    };
    const { stopPromiseHook, setPromiseHook } = globalHandlers ?? {};
    if (!globalHandlers || typeof stopPromiseHook !== 'function' || typeof setPromiseHook !== 'function')
      return undefined;
    return { off: () => globalHandlers.stopPromiseHook!(), on: () => globalHandlers.setPromiseHook!() };
  } catch {
    return undefined;
  }
}

/** CPU microseconds one `vm` call costs with a timeout (a watchdog thread each) and without. */
export function measureWatchdog(calls = 20_000): { withTimeoutUs: number; withoutUs: number } {
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
  const script = new vm.Script('1 + 1');
  const perCall = (options: vm.RunningScriptOptions) => {
    for (let i = 0; i < 1_000; i++) script.runInContext(context, options); // warm-up
    const cpu = process.cpuUsage();
    for (let i = 0; i < calls; i++) script.runInContext(context, options);
    const used = process.cpuUsage(cpu);
    return Number(((used.user + used.system) / calls).toFixed(1));
  };
  return { withoutUs: perCall({}), withTimeoutUs: perCall({ timeout: 5_000 }) };
}

type JsonHistory = { events: Record<string, unknown>[] };

/** The recorded session history up to the timer of its first question gate: parked, waiting for an answer. */
function parkedSession(): JsonHistory {
  const file = path.resolve(__dirname, '../../test/histories/question-then-message.json');
  const { events } = JSON.parse(readFileSync(file, 'utf8')) as JsonHistory;
  const timer = events.findIndex((e) => e.eventType === 'EVENT_TYPE_TIMER_STARTED');
  if (timer < 0) throw new Error(`${file} has no gate timer to cut at`);
  return { events: events.slice(0, timer + 1) };
}

/** A bare workflow parked on its signal: started, one workflow task, waiting (bare-workflow.ts). */
function parkedBare(session: JsonHistory): JsonHistory {
  type Event = { eventId: string } & Record<string, Record<string, unknown>>;
  const [started, , scheduled, startedTask, completed] = structuredClone(session.events) as Event[];
  const attributes = started!.workflowExecutionStartedEventAttributes!;
  attributes.workflowType = { name: 'bareParkedWorkflow' };
  for (const field of ['input', 'memo', 'searchAttributes']) delete attributes[field];
  const events = [started!, scheduled!, startedTask!, completed!];
  events.forEach((event, i) => (event.eventId = String(i + 1)));
  startedTask!.workflowTaskStartedEventAttributes!.scheduledEventId = '2';
  Object.assign(completed!.workflowTaskCompletedEventAttributes!, {
    scheduledEventId: '2',
    startedEventId: '3',
  });
  return { events };
}

async function replayMany(code: string, history: JsonHistory, count: number): Promise<ReplayCost> {
  let promises = 0;
  let sandboxCalls = 0;
  // The replayer runs workflows in this thread: its calls into the sandbox are counted here.
  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (this: vm.Script, ...args) {
    sandboxCalls++;
    return runInContext.apply(this, args);
  };
  // Promises made in a workflow's vm context have that context's Promise, not this one.
  const hook = v8.promiseHooks.createHook({
    init: (promise) => void (promise.constructor !== Promise && promises++),
  });
  const histories = Array.from({ length: count }, (_, i) => ({
    workflowId: `replay-${i}`,
    history: historyFromJSON(history),
  }));
  const cpu = process.cpuUsage();
  try {
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, histories))
      if (result.error) throw result.error;
  } finally {
    hook();
    vm.Script.prototype.runInContext = runInContext;
  }
  const used = process.cpuUsage(cpu);
  return {
    cpuMs: Number(((used.user + used.system) / 1000 / count).toFixed(2)),
    promises: Math.round(promises / count),
    // Creating the replay worker calls into the sandbox a few times too: spread over `count`, it rounds away.
    sandboxCalls: Math.round(sandboxCalls / count),
    workflowTasks: history.events.filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED').length,
  };
}

/** Each kind replayed `count` times after a warm-up round (the first replays also compile the bundle). */
export async function measureReplay(options: {
  sessionCode: string;
  bareCode: string;
  count: number;
}): Promise<{ bare: ReplayCost; session: ReplayCost }> {
  const session = parkedSession();
  const bare = parkedBare(session);
  await replayMany(options.bareCode, bare, 20);
  await replayMany(options.sessionCode, session, 20);
  const costs = {
    bare: await replayMany(options.bareCode, bare, options.count),
    session: await replayMany(options.sessionCode, session, options.count),
  };
  const capture = stackCaptureSwitch();
  if (capture) {
    capture.off();
    try {
      costs.bare.withoutStackCaptureMs = (await replayMany(options.bareCode, bare, options.count)).cpuMs;
      costs.session.withoutStackCaptureMs = (
        await replayMany(options.sessionCode, session, options.count)
      ).cpuMs;
    } finally {
      capture.on();
    }
  }
  return costs;
}

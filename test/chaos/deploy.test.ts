/**
 * Deploy chaos: version N+1 changes the command sequence (test/helpers/next-version.ts) while people's waits are open
 * on N, and the old buttons are clicked at each stage of the rollout (docs/VERSIONING.md):
 *   1. both versions run, N current (N+1 started with TEMPORAL_DEPLOY_PROMOTE=manual): a click on N's approval;
 *   2. N+1 made current (as `agentctl deploy promote` does): the drain sweep moves every conversation, a question and
 *      a mission run waiting on a gate onto N+1 (continue-as-new carrying the gates); the old answer and the old
 *      run button are clicked;
 *   3. N's worker stopped once nothing is pinned to it; a new turn and approval on N+1;
 *   4. rollback: N started again and made current; a gate opened on N+1 is decided after the move back.
 * And the single-process upgrade (`npm start` stopped, updated, started): one worker process of N, stopped; one of
 * N+1 on the same DATA_DIR, which drains N from the bundle it kept. Each decision takes effect once, every workflow
 * ends on the version that is current, and no run anywhere fails a workflow task on nondeterminism.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { workflowsOffVersion, type DeploymentVersion } from '../../infra/temporal/deployment';
import { nondeterminismIn, runsOf } from '../helpers/history';
import { deployWorkerEnv, nextVersionBundle, versionPair } from '../helpers/next-version';
import {
  freePort,
  gatewayProcess,
  gatewayReady,
  workerProcess,
  workerReady,
  type ManagedProcess,
} from '../helpers/processes';
import { aguiInput, aguiSay, postAgui } from '../helpers/agui';
import { TestSession, toolResults } from '../helpers/session';
import { firedMissionGate, missionAnswered } from '../helpers/missions';
import { startTestTemporal } from '../helpers/temporal';
import { chaosRuns, Tally } from './summary';

const RUNS = chaosRuns();
const ROOT = path.resolve(__dirname, '../..');
const exec = promisify(execFile);

let env: TestWorkflowEnvironment;
let bundleN: string;
let bundleN1: string;
const running: ManagedProcess[] = [];

beforeAll(async () => {
  env = await startTestTemporal();
  bundleN = inject('workflowBundlePath');
  bundleN1 = await nextVersionBundle();
}, 180_000);

afterAll(async () => {
  await Promise.all(running.map((worker) => worker.kill('SIGTERM')));
  await env?.teardown();
});

async function startWorker(
  base: Record<string, string>,
  bundle: string,
  promote: 'auto' | 'manual',
): Promise<ManagedProcess> {
  const worker = workerProcess({
    ...base,
    WORKFLOW_BUNDLE_PATH: bundle,
    TEMPORAL_DEPLOY_PROMOTE: promote,
  });
  running.push(worker);
  await worker.start(workerReady);
  return worker;
}

/** SIGTERM, as a deploy stops a worker; a worker that has not exited 20 s later is a failure (and is killed). */
async function stopWorker(worker: ManagedProcess): Promise<void> {
  running.splice(running.indexOf(worker), 1);
  const exited = worker.kill('SIGTERM').then(() => true);
  const late = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000));
  if (await Promise.race([exited, late])) return;
  await worker.kill('SIGKILL');
  throw new Error(`the ${worker.name} did not exit within 20 s of SIGTERM:\n${worker.output.slice(-2000)}`);
}

/** The real `agentctl`, as an operator runs it against this deployment. */
async function agentctl(base: Record<string, string>, ...args: string[]): Promise<string> {
  const { stdout } = await exec(process.execPath, [path.join(ROOT, 'bin/agentctl.js'), ...args], {
    env: { ...process.env, ...base },
  });
  return stdout;
}

/** The build id a conversation's current run is pinned to. */
async function versionOf(session: TestSession): Promise<string | undefined> {
  const described = await session.handle.describe();
  return described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

/** Waits until nothing on the task queue runs on another version than `version` (the drain is done). */
async function drainedOnto(taskQueue: string, version: DeploymentVersion, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (!(await workflowsOffVersion(env.client, taskQueue, version)).length) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const left = await workflowsOffVersion(env.client, taskQueue, version);
  throw new Error(`${what}: still on other versions: ${JSON.stringify(left)}`);
}

/** How many times `command`'s line was written in a conversation's working directory (under a DATA_DIR). */
function linesIn(dataDir: string, session: TestSession, file: string): number {
  const workdir = session.workflowId.replace(/[^A-Za-z0-9_.-]/g, '_');
  const full = path.join(dataDir, 'workdirs', workdir, file);
  return existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** No run on the task queue failed a workflow task on nondeterminism: the row every deploy run ends with. */
async function checkNoNondeterminism(
  tally: Tally,
  taskQueue: string,
  label: (what: string) => () => string,
): Promise<void> {
  const failures = await nondeterminismIn(env.client, await runsOf(env.client, `TaskQueue = '${taskQueue}'`));
  tally.check(failures.length === 0, label(`no nondeterminism: ${failures.join('; ')}`));
}

interface A2aTask {
  id: string;
  contextId: string;
  status: { state: string; message?: { parts: { data?: { interrupts: { id: string }[] } }[] } };
}

/** One A2A 1.0 JSON-RPC call to the gateway as alice. */
async function a2a(
  port: number,
  method: string,
  params: unknown,
): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
  const response = await fetch(`http://127.0.0.1:${port}/api/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-forwarded-user': 'alice' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
}

const messageOf = (error: unknown) => (error as Error).message.slice(0, 500);

/** The workers' warnings and errors, for a failure's message. */
function problems(workers: Record<string, ManagedProcess | undefined>): string {
  return Object.entries(workers)
    .map(([name, worker]) => {
      const lines = (worker?.output ?? '')
        .split('\n')
        .filter((line) => /"level":"(warn|error)"|Error/.test(line));
      return lines.length ? `\n${name}: ${lines.slice(-8).join('\n').slice(0, 1500)}` : '';
    })
    .join('');
}

describe('deploying a version with a changed command sequence', () => {
  it('proves N+1 really changes the command sequence (N’s histories do not replay on it)', async () => {
    const history = historyFromJSON(
      JSON.parse(readFileSync(path.resolve(__dirname, '../histories/approve-then-answer.json'), 'utf8')),
    );
    let failed = false;
    try {
      await Worker.runReplayHistory({ workflowBundle: { codePath: bundleN1 } }, history);
    } catch {
      failed = true;
    }
    if (!failed) throw new Error('the N+1 bundle replays N’s history: the deploy tests would prove nothing');
  });

  it(
    `rolls out N+1 and back while people wait, clicks at every stage taking effect once (${RUNS} runs)`,
    async () => {
      const tally = new Tally();
      // One task queue (and deployment) for every run, as in production: each run starts where the last one's
      // rollback left it (N current), and the owners' mission directories stay served.
      const taskQueue = `deploy-${randomUUID().slice(0, 8)}`;
      const [vN, vN1] = versionPair(taskQueue, bundleN, bundleN1);
      const base = deployWorkerEnv(env.address, taskQueue, { WORKER_DRAIN_INTERVAL: '300ms' });
      for (let run = 0; run < RUNS; run++) {
        const workers = { n: await startWorker(base, bundleN, 'auto') } as Record<string, ManagedProcess>;
        const approval = new TestSession(env.client, taskQueue);
        const question = new TestSession(env.client, taskQueue);
        const owner = new TestSession(env.client, taskQueue);
        const label = (what: string) => () => `run ${run}: ${what}`;
        try {
          // Waits opened on N.
          await approval.say('run `echo one >> count.txt`');
          const [first] = await approval.pendingGate();
          await question.say('ask one');
          const asked = await question.pendingQuestion();
          const runGate = await firedMissionGate(owner, `nightly${run}`);
          tally.check((await versionOf(approval)) === vN.buildId, label('the first conversation runs on N'));

          // 1. Both versions run; N is current.
          workers.n1 = await startWorker(base, bundleN1, 'manual');
          await approval.decide({ gateId: first!.id, choice: 'approve' });
          await approval.waitFor(
            (v) => v.status === 'idle' && toolResults(v).length === 1,
            'the approved call',
          );
          tally.check(linesIn(base.DATA_DIR!, approval, 'count.txt') === 1, label('N’s click ran once'));

          // 2. N+1 current: the sweep moves everything; the old answer and run button still work.
          await agentctl(base, 'deploy', 'promote', vN1.buildId, '--as', 'release-bot');
          await question.answer(asked.id, [{ question: 'Environment', selected: ['staging'] }]);
          const answered = await question.idle();
          tally.check(
            toolResults(answered).length === 1 && toolResults(answered)[0]!.content.includes('staging'),
            label('the answer given after the move took effect once'),
          );
          await owner.decide({ gateId: runGate.id, choice: 'approve' });
          await missionAnswered(owner, `nightly${run}`, 1);

          // 3. N stopped once nothing is pinned to it; a new turn on N+1.
          await drainedOnto(taskQueue, vN1, 'the drain onto N+1');
          const status = await agentctl(base, 'deploy', 'status');
          tally.check(
            new RegExp(`${vN1.buildId}\\s+current`).test(status) &&
              new RegExp(`${vN.buildId}\\s+\\w+\\s+0\\b`).test(status),
            label(`agentctl deploy status shows N+1 current and nothing left on N:\n${status}`),
          );
          await stopWorker(workers.n!);
          await approval.say('run `echo two >> count.txt`');
          const [second] = await approval.pendingGate();
          await approval.decide({ gateId: second!.id, choice: 'approve' });
          await approval.waitFor(
            (v) => v.status === 'idle' && toolResults(v).length === 2,
            'the second call',
          );
          tally.check(linesIn(base.DATA_DIR!, approval, 'count.txt') === 2, label('N+1’s click ran once'));
          for (const session of [approval, question, owner])
            tally.check((await versionOf(session)) === vN1.buildId, label(`${session.workflowId} on N+1`));

          // 4. Rollback to N with a gate open on N+1.
          await approval.say('run `echo three >> count.txt`');
          const [third] = await approval.pendingGate();
          workers.n = await startWorker(base, bundleN, 'manual');
          await agentctl(base, 'deploy', 'promote', vN.buildId, '--as', 'release-bot');
          await drainedOnto(taskQueue, vN, 'the drain back onto N');
          await approval.decide({ gateId: third!.id, choice: 'approve' });
          await approval.waitFor((v) => v.status === 'idle' && toolResults(v).length === 3, 'the third call');
          tally.check(
            linesIn(base.DATA_DIR!, approval, 'count.txt') === 3,
            label('the click after the rollback ran once'),
          );
          for (const session of [approval, question, owner])
            tally.check((await versionOf(session)) === vN.buildId, label(`${session.workflowId} back on N`));

          await checkNoNondeterminism(tally, taskQueue, label);
        } catch (error) {
          tally.check(false, label(`the rollout did not complete: ${messageOf(error)}${problems(workers)}`));
        } finally {
          for (const worker of Object.values(workers)) await stopWorker(worker).catch(() => {});
        }
      }
      tally.finish('deploy: rollout and rollback with waits open');
    },
    RUNS * 120_000,
  );

  it(
    `upgrades in place like \`npm start\`: N's process stopped, N+1's on the same data drains N (${RUNS} runs)`,
    async () => {
      const tally = new Tally();
      for (let run = 0; run < RUNS; run++) {
        const taskQueue = `inplace-${run}-${randomUUID().slice(0, 8)}`;
        const [, vN1] = versionPair(taskQueue, bundleN, bundleN1);
        const base = deployWorkerEnv(env.address, taskQueue, { WORKER_DRAIN_INTERVAL: '300ms' });
        const approval = new TestSession(env.client, taskQueue);
        const question = new TestSession(env.client, taskQueue);
        const label = (what: string) => () => `run ${run}: ${what}`;
        let worker: ManagedProcess | undefined;
        try {
          worker = await startWorker(base, bundleN, 'auto');
          await approval.say('run `echo one >> count.txt`');
          const [gate] = await approval.pendingGate();
          await question.say('ask one');
          const asked = await question.pendingQuestion();
          await stopWorker(worker);

          worker = await startWorker(base, bundleN1, 'auto');
          await approval.decide({ gateId: gate!.id, choice: 'approve' });
          await question.answer(asked.id, [{ question: 'Environment', selected: ['staging'] }]);
          await approval.waitFor(
            (v) => v.status === 'idle' && toolResults(v).length === 1,
            'the approved call',
          );
          const answered = await question.idle();
          tally.check(linesIn(base.DATA_DIR!, approval, 'count.txt') === 1, label('the old button ran once'));
          tally.check(
            toolResults(answered)[0]?.content.includes('staging') === true,
            label('the old answer'),
          );
          await drainedOnto(taskQueue, vN1, 'the in-place drain');
          for (const session of [approval, question])
            tally.check((await versionOf(session)) === vN1.buildId, label(`${session.workflowId} on N+1`));
          await checkNoNondeterminism(tally, taskQueue, label);
        } catch (error) {
          tally.check(
            false,
            label(`the upgrade did not complete: ${messageOf(error)}${problems({ worker })}`),
          );
        } finally {
          if (worker) await stopWorker(worker).catch(() => {});
        }
      }
      tally.finish('deploy: in-place upgrade (npm start) with waits open');
    },
    RUNS * 120_000,
  );

  it(
    `decides gates opened over AG-UI and A2A on N through a gateway after the rollout to N+1 (${RUNS} runs)`,
    async () => {
      const tally = new Tally();
      for (let run = 0; run < RUNS; run++) {
        const taskQueue = `protocols-${run}-${randomUUID().slice(0, 8)}`;
        const [vN, vN1] = versionPair(taskQueue, bundleN, bundleN1);
        const base = deployWorkerEnv(env.address, taskQueue, { WORKER_DRAIN_INTERVAL: '300ms' });
        const port = await freePort();
        const gateway = gatewayProcess({
          ...base,
          PORT: String(port),
          WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
          WEB_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
        });
        const as = { 'x-forwarded-user': 'alice' };
        const label = (what: string) => () => `run ${run}: ${what}`;
        const workers = {} as Record<string, ManagedProcess>;
        try {
          workers.n = await startWorker(base, bundleN, 'auto');
          await gateway.start(gatewayReady(port));
          // An AG-UI thread and an A2A task, each waiting on its approval, opened on N.
          const thread = `deploy-agui-${run}-${randomUUID().slice(0, 6)}`;
          const opened = await postAgui(
            `http://127.0.0.1:${port}/api/agui`,
            aguiSay(thread, 'run `echo agui >> d.txt`'),
            as,
          );
          const interrupt = opened.events.find((e) => e.type === 'RUN_FINISHED')?.outcome?.interrupts?.[0];
          const sent = await a2a(port, 'SendMessage', {
            message: {
              messageId: randomUUID(),
              role: 'ROLE_USER',
              parts: [{ text: 'run `echo a2a >> d.txt`' }],
            },
          });
          const task = sent.result?.task as A2aTask | undefined;
          const gateId = task?.status.message?.parts.find((p) => p.data)?.data?.interrupts[0]?.id;
          if (!interrupt || !task || !gateId)
            throw new Error(`no waits opened: ${JSON.stringify(sent).slice(0, 400)}`);
          const conversations = [`session:web:${thread}`, `session:web:${task.contextId}`];
          const versions = async () =>
            Promise.all(
              conversations.map(
                async (id) =>
                  (await env.client.workflow.getHandle(id).describe()).raw.workflowExecutionInfo
                    ?.versioningInfo?.deploymentVersion?.buildId,
              ),
            );
          tally.check(
            (await versions()).every((v) => v === vN.buildId),
            label('both opened on N'),
          );

          // The rollout: N+1 started and promoted, everything drained onto it, N stopped.
          workers.n1 = await startWorker(base, bundleN1, 'manual');
          await agentctl(base, 'deploy', 'promote', vN1.buildId, '--as', 'release-bot');
          await drainedOnto(taskQueue, vN1, 'the drain onto N+1');
          await stopWorker(workers.n);
          delete workers.n;

          // The people decide now, through the gateway, in each protocol.
          const resumed = await postAgui(
            `http://127.0.0.1:${port}/api/agui`,
            aguiInput(thread, {
              resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { choice: 'approve' } }],
            }),
            as,
          );
          const finished = resumed.events.find((e) => e.type === 'RUN_FINISHED');
          tally.check(
            finished?.outcome?.type === 'success',
            label(`the AG-UI resume finished: ${JSON.stringify(resumed.events.at(-1))}`),
          );
          const answered = await a2a(port, 'SendMessage', {
            message: {
              messageId: randomUUID(),
              role: 'ROLE_USER',
              contextId: task.contextId,
              taskId: task.id,
              parts: [
                {
                  data: {
                    resume: [{ interruptId: gateId, status: 'resolved', payload: { choice: 'approve' } }],
                  },
                },
              ],
            },
          });
          const state = (answered.result?.task as A2aTask | undefined)?.status.state;
          tally.check(
            state === 'TASK_STATE_COMPLETED',
            label(`the A2A task completed: ${JSON.stringify(answered).slice(0, 300)}`),
          );
          for (const id of conversations) {
            const full = path.join(base.DATA_DIR!, 'workdirs', id.replace(/[^A-Za-z0-9_.-]/g, '_'), 'd.txt');
            const lines = existsSync(full)
              ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length
              : 0;
            tally.check(lines === 1, label(`${id}'s command ran once (${lines})`));
          }
          tally.check(
            (await versions()).every((v) => v === vN1.buildId),
            label('both on N+1'),
          );
          await checkNoNondeterminism(tally, taskQueue, label);
        } catch (error) {
          tally.check(
            false,
            label(
              `the protocols' rollout did not complete: ${messageOf(error)}${problems({ ...workers, gateway })}`,
            ),
          );
        } finally {
          await gateway.kill('SIGTERM').catch(() => {});
          for (const worker of Object.values(workers)) await stopWorker(worker).catch(() => {});
        }
      }
      tally.finish('deploy: AG-UI and A2A gates decided after the rollout');
    },
    RUNS * 120_000,
  );
});

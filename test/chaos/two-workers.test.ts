/**
 * Chaos: two workers on one task queue, each with a DATA_DIR of its own (two hosts). The one running a tool
 * with side effects is SIGKILLed, or SIGTERMed as a deploy does (shutdownGraceTime, then the run is cut
 * off); the other worker must finish the turn with "interrupted: may or may not have run" and never run the
 * call again. Every run of the command appends a line to the count file in the working directory of the
 * host that ran it, and both hosts' files are read: a second run, on either host, would show.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { testEnv } from '../helpers/config';
import { workerProcess, workerReady, type ManagedProcess } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { chaosRuns, Tally } from './summary';

const RUNS = chaosRuns();
/** The shell runs without approval, so nothing but the kill happens between the message and the run. */
const POLICY = { tools: { shell_execute: { policy: 'auto' } } };
const COMMAND = 'run `echo ran >> count.txt; sleep 30`';

interface Host {
  env: Record<string, string>;
  worker: ManagedProcess;
}

let env: TestWorkflowEnvironment;
let stack: Stack;
let hosts: [Host, Host];

beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({ temporalAddress: env.address, policy: POLICY });
  // The second host: same Temporal server, task queue and policy; its own DATA_DIR.
  const own = testEnv(POLICY);
  const secondEnv = { ...stack.env, DATA_DIR: own.DATA_DIR!, AGENT_CONFIG: own.AGENT_CONFIG! };
  const second = workerProcess(secondEnv);
  await second.start(workerReady);
  hosts = [
    { env: stack.env, worker: stack.worker },
    { env: secondEnv, worker: second },
  ];
});
afterAll(async () => {
  await Promise.all(hosts?.map((host) => host.worker.kill('SIGTERM')) ?? []);
  await stack?.gateway.kill('SIGTERM');
  await env?.teardown();
});

/** The lines the command left on one host; the working directory is per conversation under DATA_DIR. */
function runsOn(host: Host, session: string): number {
  const workdir = `session:web:${session}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  const file = path.join(host.env.DATA_DIR!, 'workdirs', workdir, 'count.txt');
  return existsSync(file) ? readFileSync(file, 'utf8').match(/ran/g)!.length : 0;
}

async function hostRunning(session: string): Promise<Host> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const host = hosts.find((h) => runsOn(h, session) > 0);
    if (host) return host;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no worker started the command of ${session}`);
}

async function replace(host: Host): Promise<void> {
  host.worker = workerProcess(host.env);
  await host.worker.start(workerReady);
}

/** One run: the message, the kill of the host running the command, the other host's answer. */
async function killMidRun(tally: Tally, session: string, signal: NodeJS.Signals): Promise<void> {
  await stack.web.say(session, COMMAND);
  const running = await hostRunning(session);
  await running.worker.kill(signal);
  const replaced = replace(running);
  const view = await stack.web.answered(session);
  await replaced;
  const results = view.transcript.filter((m) => m.role === 'tool');
  const runs = hosts.reduce((sum, host) => sum + runsOn(host, session), 0);
  if (results.length === 0) tally.lost++;
  tally.check(
    runs === 1 &&
      results.length === 1 &&
      results[0]!.status === 'error' &&
      results[0]!.content.startsWith('interrupted: may or may not have run'),
    () => `${session}: ran ${runs} time(s); results ${JSON.stringify(results)}`,
  );
}

async function repeat(signal: NodeJS.Signals, scenario: string): Promise<void> {
  const tally = new Tally();
  for (let i = 0; i < RUNS; i++) {
    const session = `${signal.toLowerCase()}-${i}`;
    try {
      await killMidRun(tally, session, signal);
    } catch (error) {
      tally.check(false, () => `${session}: ${(error as Error).message}`);
    }
  }
  tally.finish(scenario);
}

describe('two workers, one tool run cut off on one of them', () => {
  it(
    'reports a run whose worker was SIGKILLed as interrupted from the other worker, and never runs it again',
    async () => {
      await repeat('SIGKILL', 'two workers: SIGKILL of the one running a tool');
    },
    RUNS * 90_000 + 60_000,
  );

  it(
    'reports a run cut off by a deploy (SIGTERM, grace time over) as interrupted, and never runs it again',
    async () => {
      await repeat('SIGTERM', 'two workers: SIGTERM (deploy) of the one running a tool');
    },
    RUNS * 90_000 + 60_000,
  );
});

/**
 * Missions through real tool calls (the scripted model's "call <tool> <args>"), a real worker and a real
 * Temporal server: addressing, runs, cron without pile-up, gates that pause and resume a run in place,
 * failures (denied, expired, cancelled runs end and fail the mission), notifications and per-user isolation.
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialService } from '../../infra/credentials/service';
import type { AppConfig } from '../../infra/config';
import {
  MISSION_DIRECTORY_ID,
  missionDirectoryId,
  missionWorkflowId,
  type MissionRecord,
} from '../../common/missions/types';
import { missionRecordsOf } from '../helpers/missions';
import { resumeWaitingWorkflows } from '../../gateways/oauth/resume';
import {
  fireSignal,
  missionViewQuery,
  registerMissionUpdate,
  type MissionView,
} from '../../workflows/missions/contract';
import { MissionTools, uuidOf } from '../../activities/missions';
import { registerMission } from '../../infra/missions-directory';
import {
  credentialProvidedSignal,
  stateQuery,
  type Message,
  type SessionView,
} from '../../workflows/session/contract';
import { upgradeSignal } from '../../workflows/upgrade';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { createTestWorker } from '../helpers/worker';
import { testConfig } from '../helpers/config';
import { until as untilDone } from '../helpers/until';
import { settledHistoryLength } from '../helpers/history';

const policy = {
  maxSteps: 3,
  // Posting asks for approval; here it waits only seconds, so an expired gate can be seen.
  // Reads with a connected account run at once here (the default asks first: test/security/consent.test.ts).
  tools: {
    http_request: {
      approvalTimeout: '3s',
      when: [{ match: { method: 'GET', auth: '*' }, policy: 'auto' }],
    },
  },
  missions: { maxConsecutiveFailures: 2 },
  // The scripted model estimates 4 characters a token: only a run on a very long goal reaches this.
  budgets: { perMissionRun: { tokens: 1_500 } },
  providers: {
    acme: {
      type: 'oauth2',
      issuer: 'https://id.acme.example',
      displayName: 'Acme',
      apiHosts: ['127.0.0.1:9'],
    },
  },
};
const providerEnv = { OAUTH_ACME_CLIENT_ID: 'client' };

// One worker for the file: the mission directory is one long-lived workflow on one task queue, as in production.
let env: TestWorkflowEnvironment;
let config: AppConfig;
let taskQueue: string;
let stopWorker: () => Promise<void>;
beforeAll(async () => {
  env = await startTestTemporal();
  config = testConfig(policy, providerEnv);
  const created = await createTestWorker(env, config);
  taskQueue = created.taskQueue;
  const running = created.worker.run();
  stopWorker = async () => {
    created.worker.shutdown();
    await running;
  };
});
afterAll(async () => {
  await stopWorker?.();
  await env?.teardown();
});

const tools = (v: SessionView) =>
  v.transcript.filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');

/** Says "call <tool> <args>" and returns that call's result. */
async function call(s: TestSession, tool: string, args: unknown, userId = 'alice') {
  const before = tools(await s.state().catch(() => ({ transcript: [] }) as unknown as SessionView)).length;
  await s.say(`call ${tool} ${typeof args === 'string' ? args : JSON.stringify(args)}`, userId);
  const view = await s.waitFor((v) => v.status === 'idle' && tools(v).length > before, `${tool} result`);
  return tools(view).at(-1)!;
}

/** A mission's id, from the directory (tool results show names only). */
async function missionIdOf(name: string, ownerId = 'alice'): Promise<string> {
  const records = await missionRecordsOf(env.client.workflow, ownerId);
  const id = records.find((r) => r.name === name && r.status !== 'completed')?.id;
  if (!id) throw new Error(`no mission "${name}" of ${ownerId} in the directory`);
  return id;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

const view = (id: string) => env.client.workflow.getHandle(missionWorkflowId(id)).query(missionViewQuery);

const until = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000) =>
  untilDone(what, probe, { timeoutMs, ignoreErrors: true });

const notes = (v: SessionView) =>
  v.transcript.filter((m) => m.role === 'assistant' && m.synthetic).map((m) => (m as { text: string }).text);

describe('missions', () => {
  it('resolves names, ids and positional arguments, renames both ways, and keeps users apart', async () => {
    const s = new TestSession(env.client, taskQueue);
    const created = await call(s, 'mission_create', {
      name: 'daily report',
      goal: 'what time is it',
      cadence: 'manual',
    });
    expect(created).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('Created mission "daily report"'),
    });
    // Create, then fire by name at once: the directory is strongly consistent.
    expect((await call(s, 'mission_fire', { name: 'daily report' })).status).toBe('ok');
    await s.waitFor((v) => notes(v).some((n) => n.startsWith('**daily report** (run 1)')), 'the run result');
    const id = await missionIdOf('daily report');
    await call(s, 'routine_create', { name: 'weekly', goal: 'what time is it', cadence: 'manual' });
    const weeklyId = await missionIdOf('weekly');

    expect((await call(s, 'mission_get', { id })).content).toContain('Mission "daily report"');
    // Tool results name missions; ids never show.
    expect(created.content).not.toMatch(UUID);
    expect((await call(s, 'mission_list', {})).content).not.toMatch(UUID);
    expect((await call(s, 'mission_get', { name: 'daily report' })).content).not.toMatch(UUID);
    // The legacy shapes: a name passed as `id`, and the positional `{"_args": [name]}`.
    expect((await call(s, 'mission_get', { id: 'weekly' })).content).toContain('Mission "weekly"');
    expect((await call(s, 'routine_get', { _args: ['daily report'] })).content).toContain(
      'Mission "daily report"',
    );
    expect((await call(s, 'mission_get', { name: 'daily report', id })).status).toBe('ok');
    const conflict = await call(s, 'mission_get', { name: 'daily report', id: weeklyId });
    expect(conflict).toMatchObject({
      status: 'error',
      content: expect.stringContaining('two different missions'),
    });
    expect((await call(s, 'routine_get', '"weekly"')).content).toContain('Mission "weekly"');
    // A positional argument is a name, never an id.
    expect((await call(s, 'mission_get', JSON.stringify(id))).content).toMatch(/no mission named/);
    const typo = await call(s, 'mission_fire', { name: 'daily reprot' });
    expect(typo).toMatchObject({
      status: 'error',
      content: expect.stringContaining('Did you mean "daily report"'),
    });

    expect((await call(s, 'mission_update', { name: 'weekly', new_name: 'weekly digest' })).status).toBe(
      'ok',
    );
    expect((await call(s, 'mission_update', { id: weeklyId, name: 'weekly summary' })).content).toContain(
      'renamed to "weekly summary"',
    );
    expect((await view(weeklyId)).name).toBe('weekly summary');
    const taken = await call(s, 'mission_update', { name: 'weekly summary', new_name: 'daily report' });
    expect(taken).toMatchObject({
      status: 'error',
      content: expect.stringContaining('already have a mission named'),
    });

    // Bob sees none of it, and errors tell him nothing about alice's missions.
    const b = new TestSession(env.client, taskQueue);
    expect((await call(b, 'mission_list', {}, 'bob')).content).toContain('No missions yet');
    const byId = await call(b, 'mission_pause', { id }, 'bob');
    expect(byId.status).toBe('error');
    expect(byId.content).not.toContain('daily report');
    const byName = await call(b, 'mission_fire', { name: 'daily report' }, 'bob');
    expect(byName.content).toContain('You have no missions yet');
    expect((await view(id)).status).toBe('active');
    // Shared missions are visible to everyone.
    await call(s, 'mission_update', { name: 'weekly summary', shared: true });
    await until('bob sees the shared mission', async () =>
      (await call(b, 'mission_list', {}, 'bob')).content.includes(
        '"weekly summary" — active (shared by @alice)',
      ),
    );
    // Bob finds it by name (through visibility: no workflow holds everyone's missions) and may read it.
    expect((await call(b, 'mission_get', { name: 'Weekly Summary' }, 'bob')).content).toContain(
      'Mission "weekly summary"',
    );
    // Each owner has a directory of their own: alice's holds only hers, and bob (who created none) has none.
    const alices = await missionRecordsOf(env.client.workflow, 'alice');
    expect(alices.every((r) => r.ownerId === 'alice')).toBe(true);
    expect(alices.map((r) => r.name)).toEqual(expect.arrayContaining(['daily report', 'weekly summary']));
    await expect(env.client.workflow.getHandle(missionDirectoryId('bob')).describe()).rejects.toThrow();
  });

  it('fires on a cron cadence, never piles up runs behind an open gate, and resumes the run in place on approval', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', {
      name: 'cleanup',
      goal: 'run `echo cleaned`',
      cadence: '*/2 * * * * *',
    });
    const id = await missionIdOf('cleanup');
    const paused = await until('the run paused on its approval', async () => {
      const v = await view(id);
      return v.gate && v.status === 'paused' ? v : undefined;
    });
    expect(paused.gate).toMatchObject({ kind: 'approval', tool: 'shell_execute' });
    // The owner's conversation shows the gate; later due fires are skipped, not stacked.
    const shown = await s.waitFor(
      (v) => v.gates.some((g) => g.remote && g.status === 'pending'),
      'the gate shown here',
    );
    // While the run waits on a person, the cron ticks (every 2 s) cost the mission nothing: its history stays put.
    const mission = env.client.workflow.getHandle(missionWorkflowId(id));
    const historyBefore = await settledHistoryLength(mission);
    await new Promise((resolve) => setTimeout(resolve, 6_000)); // three ticks
    expect((await mission.describe()).historyLength).toBe(historyBefore);
    expect((await view(id)).runs).toHaveLength(1);
    const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
    // Someone else's click is refused by the run, and they are told here, where they clicked.
    await s.decide({ gateId: gate.id, choice: 'approve', userId: 'mallory' });
    const refused = await s.waitFor(
      (v) => v.notices.some((n) => n.to === 'mallory'),
      "the run's refusal, told to mallory here",
    );
    expect(refused.notices.find((n) => n.to === 'mallory')!.text).toMatch(
      /^cleanup: You may not decide on this shell_execute call: only @alice may/,
    );
    expect(refused.gates.find((g) => g.id === gate.id)!.status).toBe('pending');
    await s.decide({ gateId: gate.id, choice: 'approve' });
    await s.waitFor(
      (v) => notes(v).some((n) => n.includes('**cleanup** (run 1)') && n.includes('cleaned')),
      'run 1 result',
    );
    const after = await until('active again', async () => {
      const v = await view(id);
      return v.status === 'active' && v.runs[0]?.outcome === 'ok' ? v : undefined;
    });
    expect(after.gate).toBeNull();
    // The ticks the run covered are skipped, said once; none started a second run.
    expect(after.skipped.map((k) => k.reason)).toEqual([
      expect.stringMatching(
        /^cron fires due since \d{4}-\d\d-\d\d \d\d:\d\d UTC skipped: run 1 was still going$/,
      ),
    ]);
    expect(after.runs).toHaveLength(1);
    // The run continued in place: one workflow, one approval, one tool run.
    const run = await env.client.workflow.getHandle(after.runs[0]!.workflowId).query(stateQuery);
    expect(run.gates.map((g) => [g.kind, g.resolution?.outcome])).toEqual([['approval', 'approved']]);
    expect(tools(run).map((m) => [m.name, m.status])).toEqual([['shell_execute', 'ok']]);
    expect(run.channel).toBe('mission');
    await call(s, 'mission_complete', { name: 'cleanup' });
    await until(
      'completed',
      async () =>
        (await env.client.workflow.getHandle(missionWorkflowId(id)).describe()).status.name === 'COMPLETED',
    );
  });

  it('pauses a run at its budget, asks its owner to continue, and fails the mission with the reason on Stop', async () => {
    const s = new TestSession(env.client, taskQueue);
    // "loop" calls a tool at every step; the long goal makes each model call about a thousand tokens.
    await call(s, 'mission_create', {
      name: 'spender',
      goal: `loop ${'now '.repeat(950)}`,
      cadence: 'manual',
    });
    const id = await missionIdOf('spender');
    await call(s, 'mission_fire', 'spender');
    const paused = await until('the run paused at its budget', async () => {
      const v = await view(id);
      return v.gate && v.status === 'paused' ? v : undefined;
    });
    expect(paused.gate).toMatchObject({ kind: 'approval', tool: 'budget' });
    const shown = await s.waitFor(
      (v) => v.gates.some((g) => g.remote && g.status === 'pending'),
      'the budget gate in the owner conversation',
    );
    const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
    expect(gate).toMatchObject({ toolName: 'budget', remote: { missionName: 'spender' } });
    expect(gate.kind === 'approval' && gate.subject).toMatch(
      /^This mission run has used [\d,]+ of 1,500 tokens\. Continue with 1,500 tokens more\?$/,
    );
    await s.decide({ gateId: gate.id, choice: 'deny' });
    const failed = await until('failed', async () => {
      const v = await view(id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(failed.reason).toContain('budget');
    // The run made exactly the model calls its budget allowed: two steps, each with its tool result.
    const run = await env.client.workflow.getHandle(failed.runs[0]!.workflowId).query(stateQuery);
    expect(tools(run).map((m) => m.name)).toEqual(['current_time', 'current_time']);
    expect(run.usage!.tokens).toBeGreaterThanOrEqual(1_500);
  });

  it("fails the mission with the reason when a run's approval is denied", async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'risky', goal: 'run `rm -rf /tmp/x`', cadence: 'manual' });
    await call(s, 'mission_fire', 'risky');
    const shown = await s.waitFor((v) => v.gates.some((g) => g.remote && g.status === 'pending'), 'the gate');
    const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
    await s.decide({ gateId: gate.id, choice: 'deny', reason: 'not today' });
    const id = await missionIdOf('risky');
    const failed = await until('failed', async () => {
      const v = await view(id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(failed.reason).toContain('denied');
    expect(failed.reason).toContain('not today');
    await s.waitFor((v) => notes(v).some((n) => n.includes('**risky** failed')), 'the failure notice');
    // The run ended, and the prompt here shows the denial.
    const run = env.client.workflow.getHandle(failed.runs[0]!.workflowId);
    await until('the run ended', async () => (await run.describe()).status.name !== 'RUNNING');
    expect((await s.state()).gates.find((g) => g.id === gate.id)!.resolution?.outcome).toBe('denied');
    // A fire on a failed mission says so, and starts nothing.
    const refused = await call(s, 'mission_fire', { name: 'risky' });
    expect(refused).toMatchObject({
      status: 'error',
      content: expect.stringContaining('"risky" is failed'),
    });
    expect((await view(id)).runs).toHaveLength(1);
    // mission_resume makes it active again.
    await call(s, 'mission_resume', { name: 'risky' });
    await until('active', async () => (await view(id)).status === 'active');
  });

  it('stays waiting when resumed while a run waits on a gate, and still fails when that gate is denied', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', {
      name: 'resumed-waiting',
      goal: 'run `echo waiting`',
      cadence: 'manual',
    });
    await call(s, 'mission_fire', 'resumed-waiting');
    const shown = await s.waitFor((v) => v.gates.some((g) => g.remote && g.status === 'pending'), 'the gate');
    const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
    const id = await missionIdOf('resumed-waiting');
    await until('the mission waiting', async () => (await view(id)).gate !== null);
    await call(s, 'mission_resume', { name: 'resumed-waiting' });
    const resumed = await until('active again', async () => {
      const v = await view(id);
      return v.status === 'active' ? v : undefined;
    });
    // Still true: the run waits, and says on what (the waiting line is built from this record).
    expect(resumed.gate).toMatchObject({ gateId: gate.id, kind: 'approval' });
    expect(resumed.running).not.toBeNull();
    // A fire meanwhile starts nothing: the run is still going.
    expect((await call(s, 'mission_fire', { name: 'resumed-waiting' })).content).toContain(
      'is still running',
    );
    await s.decide({ gateId: gate.id, choice: 'deny', reason: 'changed my mind' });
    const failed = await until('failed', async () => {
      const v = await view(id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(failed.reason).toContain('changed my mind');
    expect(failed.gate).toBeNull();
    expect(failed.runs).toHaveLength(1);
  });

  it('continues as new while a run waits on its gate (a deploy moving it), and the run it left still ends there', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'mover', goal: 'run `echo moved`', cadence: 'manual' });
    const id = await missionIdOf('mover');
    const mission = env.client.workflow.getHandle(missionWorkflowId(id));
    const moveNow = async () => {
      const before = (await mission.describe()).runId;
      await mission.signal(upgradeSignal);
      await until('the mission continued as new', async () => (await mission.describe()).runId !== before);
    };
    const gateShown = async (n: number) => {
      const shown = await s.waitFor(
        (v) =>
          v.gates.filter((g) => g.remote).length >= n &&
          v.gates.some((g) => g.remote && g.status === 'pending'),
        `run ${n}'s gate`,
      );
      return shown.gates.find((g) => g.remote && g.status === 'pending')!;
    };
    await call(s, 'mission_fire', 'mover');
    const first = await gateShown(1);
    await until('the mission waiting', async () => (await view(id)).gate !== null);
    await moveNow();
    // The new execution knows the run in flight and what it waits on.
    const moved = await view(id);
    expect(moved.gate).toMatchObject({ gateId: first.id, kind: 'approval' });
    expect(moved.status).toBe('paused');
    expect(moved.running).toBe(moved.runs[0]!.workflowId);
    await s.decide({ gateId: first.id, choice: 'approve' });
    await s.waitFor(
      (v) => notes(v).some((n) => n.includes('**mover** (run 1)') && n.includes('moved')),
      'run 1 result',
    );
    const done = await until('run 1 recorded by the new execution', async () => {
      const v = await view(id);
      return v.status === 'active' && v.runs[0]?.outcome === 'ok' && v.running === null ? v : undefined;
    });
    expect(done.gate).toBeNull();
    // Moved again while run 2 waits, then denied: the mission still fails with the reason.
    await call(s, 'mission_fire', 'mover');
    const second = await gateShown(2);
    await until('the mission waiting again', async () => (await view(id)).gate?.gateId === second.id);
    await moveNow();
    await s.decide({ gateId: second.id, choice: 'deny', reason: 'not today' });
    const failed = await until('failed', async () => {
      const v = await view(id);
      return v.status === 'failed' && v.running === null ? v : undefined;
    });
    expect(failed.reason).toContain('not today');
    expect(failed.runs.map((r) => r.outcome)).toEqual(['ok', 'cancelled']);
    // A run terminated after its mission moved tells nobody its end: the next fire finds it ended and starts run 4.
    await call(s, 'mission_resume', { name: 'mover' });
    await call(s, 'mission_fire', 'mover');
    await gateShown(3);
    const third = await until('run 3 waiting', async () => {
      const v = await view(id);
      return v.gate && v.running ? v : undefined;
    });
    await moveNow();
    await env.client.workflow.getHandle(third.running!).terminate('an operator ended it');
    expect((await call(s, 'mission_fire', 'mover')).status).toBe('ok');
    const healed = await until('run 3 recorded as failed, run 4 started', async () => {
      const v = await view(id);
      return v.runs.length === 4 ? v : undefined;
    });
    expect(healed.runs[2]).toMatchObject({
      outcome: 'failed',
      summary: 'run 3 ended without telling its mission (terminated)',
    });
  });

  it('shows its latest runs with mission_history: how each started, its outcome, and who decided its gates', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'audited', goal: 'run `echo audited`', cadence: 'manual' });
    expect((await call(s, 'mission_history', 'audited')).content).toBe('Mission "audited" has not run yet.');
    for (const [n, choice] of [
      [1, 'approve'],
      [2, 'deny'],
    ] as const) {
      await call(s, 'mission_fire', 'audited');
      const shown = await s.waitFor(
        (v) =>
          v.gates.filter((g) => g.remote).length === n &&
          v.gates.some((g) => g.remote && g.status === 'pending'),
        `run ${n}'s gate`,
      );
      const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
      await s.decide({ gateId: gate.id, choice, ...(choice === 'deny' ? { reason: 'enough' } : {}) });
      const id = await missionIdOf('audited');
      await until(`run ${n} ended`, async () => (await view(id)).runs[n - 1]?.outcome);
    }
    const history = await call(s, 'mission_history', { name: 'audited', last: 5 });
    expect(history.status).toBe('ok');
    const lines = history.content.split('\n');
    expect(lines[0]).toBe('Mission "audited": the latest 2 runs, newest first');
    expect(lines[1]).toMatch(/^Run 2: \d{4}-\d\d-\d\d \d\d:\d\d UTC, manual, took \d+ s: cancelled/);
    expect(lines[2]).toBe('  shell_execute: denied by @alice');
    expect(lines[3]).toMatch(/^Run 1: .*, manual, took \d+ s: ok — /);
    expect(lines[4]).toBe('  shell_execute: approved by @alice');
    expect(history.content).not.toMatch(UUID);
    expect((await call(s, 'mission_history', { name: 'audited', last: 1 })).content.split('\n')).toHaveLength(
      3,
    );
    // Another person the mission is not shared with sees nothing of it.
    const stranger = new TestSession(env.client, taskQueue);
    expect((await call(stranger, 'mission_history', 'audited', 'mallory')).status).toBe('error');
  });

  it('pauses a run on a credential gate and resumes it in place after the owner signs in', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', {
      name: 'files',
      goal: 'fetch http://127.0.0.1:9/files with acme',
      cadence: 'manual',
    });
    await call(s, 'mission_fire', { name: 'files' });
    const id = await missionIdOf('files');
    const paused = await until('paused on the sign-in', async () => {
      const v = await view(id);
      return v.gate?.kind === 'credential' ? v : undefined;
    });
    expect(paused.status).toBe('paused');
    expect(paused.gate!.needed).toBe('@alice to connect Acme');
    await s.waitFor(
      (v) => v.gates.some((g) => g.remote && g.kind === 'credential'),
      'the Connect prompt here',
    );
    // The gateway's callback after a sign-in: store, then resume every workflow waiting for alice's acme.
    const credentials = CredentialService.fromConfig(config);
    await credentials.vault.put('alice', 'acme', { accessToken: 'mission-token' }, null);
    await credentials.close();
    const resumed = await until('the run found by its search attribute', async () => {
      const ids = await resumeWaitingWorkflows(env.client, 'alice', 'acme');
      return ids.length ? ids : undefined;
    });
    expect(resumed).toEqual([paused.gate!.runWorkflowId]);
    const done = await until('the run finished', async () => {
      const v = await view(id);
      return v.runs[0]?.outcome ? v : undefined;
    });
    expect(done.status).toBe('active');
    expect(done.runs).toHaveLength(1);
    await s.waitFor((v) => notes(v).some((n) => n.includes('**files** (run 1)')), 'the result posted');
  });

  it("never resumes a shared mission's run with someone else's sign-in: it waits for its owner's", async () => {
    const s = new TestSession(env.client, taskQueue);
    // Dora owns it and has not connected Acme (alice has, in an earlier test).
    await call(
      s,
      'mission_create',
      {
        name: 'team files',
        goal: 'fetch http://127.0.0.1:9/team with acme',
        cadence: 'manual',
        shared: true,
      },
      'dora',
    );
    await call(s, 'mission_fire', { name: 'team files' }, 'dora');
    const id = await missionIdOf('team files', 'dora');
    const paused = await until('paused on the sign-in', async () => {
      const v = await view(id);
      return v.gate?.kind === 'credential' ? v : undefined;
    });
    const run = env.client.workflow.getHandle(paused.gate!.runWorkflowId);
    // Carol connects Acme for her own reasons: her sign-in finds nothing of Dora's to resume...
    const credentials = CredentialService.fromConfig(config);
    await credentials.vault.put('carol', 'acme', { accessToken: 'carols-token' }, null);
    expect(await resumeWaitingWorkflows(env.client, 'carol', 'acme')).toEqual([]);
    // ...and even a credentialProvided signal naming her, sent straight to the run, decides nothing.
    await run.signal(credentialProvidedSignal, { provider: 'acme', userId: 'carol' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const waiting = await run.query(stateQuery);
    expect(waiting.gates.find((g) => g.kind === 'credential')).toMatchObject({
      status: 'pending',
      requesterId: 'dora',
    });
    expect(tools(waiting).some((t) => t.content.includes('carol'))).toBe(false);
    // Dora's own sign-in resumes it, with her account.
    await credentials.vault.put('dora', 'acme', { accessToken: 'doras-token' }, null);
    await credentials.close();
    const resumed = await until('the run found', async () => {
      const ids = await resumeWaitingWorkflows(env.client, 'dora', 'acme');
      return ids.length ? ids : undefined;
    });
    expect(resumed).toEqual([paused.gate!.runWorkflowId]);
    await until('the run finished', async () => (await view(id)).runs[0]?.outcome);
    const done = await run.query(stateQuery);
    expect(done.gates.find((g) => g.kind === 'credential')!.resolution).toMatchObject({ by: 'dora' });
    expect(tools(done).at(-1)!.content).not.toContain('carol');
  });

  it("fails the mission when a run's approval expires, and says so in the owner's conversation", async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', {
      name: 'poster',
      goal: 'post https://example.invalid hello',
      cadence: 'manual',
    });
    await call(s, 'mission_fire', { name: 'poster' });
    const id = await missionIdOf('poster');
    const failed = await until('failed', async () => {
      const v = await view(id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(failed.reason).toMatch(/^run 1: http_request .*expired/);
    await s.waitFor(
      (v) => notes(v).some((n) => n.startsWith('**poster** failed: run 1: http_request')),
      'the failure told',
    );
    const shown = await s.waitFor(
      (v) => v.gates.some((g) => g.remote && g.resolution?.outcome === 'expired'),
      'the prompt here closed as expired',
    );
    expect(shown.gates.filter((g) => g.status === 'pending')).toEqual([]);
    const run = env.client.workflow.getHandle(failed.runs[0]!.workflowId);
    await until('the run ended', async () => (await run.describe()).status.name !== 'RUNNING');
  });

  it('fails the mission when someone cancels a run that waits on a gate, and closes its prompt', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'stopper', goal: 'run `echo stop`', cadence: 'manual' });
    await call(s, 'mission_fire', { name: 'stopper' });
    const id = await missionIdOf('stopper');
    const paused = await until('paused on the approval', async () => {
      const v = await view(id);
      return v.gate ? v : undefined;
    });
    await s.waitFor((v) => v.gates.some((g) => g.remote && g.status === 'pending'), 'the prompt here');
    await env.client.workflow.getHandle(paused.gate!.runWorkflowId).cancel();
    const failed = await until('failed', async () => {
      const v = await view(id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(failed.reason).toBe('run 1 was cancelled');
    const told = await s.waitFor(
      (v) => notes(v).some((n) => n.startsWith('**stopper** failed: run 1 was cancelled')),
      'the failure told',
    );
    expect(told.gates.find((g) => g.remote)).toMatchObject({
      status: 'cancelled',
      resolution: { outcome: 'cancelled' },
    });
    const run = await env.client.workflow.getHandle(paused.gate!.runWorkflowId).describe();
    expect(run.status.name).toBe('CANCELLED');
  });

  it("keeps a run's gate open in the owner's conversation while the owner talks about something else", async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'chatty', goal: 'run `echo chatty`', cadence: 'manual' });
    await call(s, 'mission_fire', { name: 'chatty' });
    const shown = await s.waitFor((v) => v.gates.some((g) => g.remote && g.status === 'pending'), 'the gate');
    const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
    // A new message from the owner starts a new turn here; the run's gate is decided only by the run.
    expect((await call(s, 'current_time', {})).status).toBe('ok');
    expect((await s.state()).gates.find((g) => g.id === gate.id)!.status).toBe('pending');
    const id = await missionIdOf('chatty');
    expect((await view(id)).status).toBe('paused');
    await s.decide({ gateId: gate.id, choice: 'approve' });
    await s.waitFor(
      (v) => notes(v).some((n) => n.includes('**chatty** (run 1)') && n.includes('chatty')),
      'the result',
    );
    await until('active again', async () => (await view(id)).status === 'active');
  });

  it('posts a run\'s gate to its owner with notify "none", and its result nowhere', async () => {
    const s = new TestSession(env.client, taskQueue);
    const created = await call(s, 'mission_create', {
      name: 'silent',
      goal: 'run `echo silent`',
      cadence: 'manual',
      notify: 'none',
    });
    expect(created.content).toContain('approvals and questions of its runs come to this conversation');
    await call(s, 'mission_fire', { name: 'silent' });
    const shown = await s.waitFor(
      (v) => v.gates.some((g) => g.remote?.missionName === 'silent' && g.status === 'pending'),
      'the gate shown to the owner',
    );
    const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
    await s.decide({ gateId: gate.id, choice: 'approve' });
    const id = await missionIdOf('silent');
    await until('the run finished', async () => (await view(id)).runs[0]?.outcome === 'ok');
    const after = await s.state();
    expect(after.gates.find((g) => g.id === gate.id)!.resolution?.outcome).toBe('approved');
    expect(notes(after).some((n) => n.includes('**silent**'))).toBe(false);
  });

  it("asks a run's question in the owner's conversation and continues the run with the typed answer", async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'deploy', goal: 'ask one', cadence: 'manual' });
    await call(s, 'mission_fire', '"deploy"');
    const id = await missionIdOf('deploy');
    const paused = await until('paused on the question', async () => {
      const v = await view(id);
      return v.gate?.kind === 'question' ? v : undefined;
    });
    expect(paused).toMatchObject({
      status: 'paused',
      gate: { needed: expect.stringMatching(/^an answer to ".+" from @alice$/) },
    });
    await s.waitFor(
      (v) => v.gates.some((g) => g.remote && g.kind === 'question' && g.status === 'pending'),
      'the question here',
    );
    await s.say('1');
    await s.waitFor((v) => notes(v).some((n) => n.includes('**deploy** (run 1)')), 'the run result');
    const done = await until('active again', async () => {
      const v = await view(id);
      return v.status === 'active' && v.runs[0]?.outcome === 'ok' ? v : undefined;
    });
    const run = await env.client.workflow.getHandle(done.runs[0]!.workflowId).query(stateQuery);
    expect(tools(run).map((m) => [m.name, m.status])).toEqual([['ask_user', 'ok']]);
    expect(tools(run)[0]!.content).toContain('staging');
  });

  it("pauses by name, says why a fire starts no run, and posts each run's result on a re-fire", async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'digest', goal: 'what time is it', cadence: 'manual' });
    await call(s, 'mission_fire', { name: 'digest' });
    await s.waitFor((v) => notes(v).some((n) => n.startsWith('**digest** (run 1)')), 'run 1 result');
    const id = await missionIdOf('digest');
    await until('run 1 recorded', async () => (await view(id)).runs[0]?.outcome === 'ok');
    const again = await call(s, 'mission_fire', { name: 'digest' });
    expect(again.content).toContain('a run starts now; its result will be posted');
    await s.waitFor((v) => notes(v).some((n) => n.startsWith('**digest** (run 2)')), 'run 2 result');

    expect(await call(s, 'mission_pause', { name: 'digest', reason: 'holidays' })).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('Paused "digest"'),
    });
    await until('paused', async () => (await view(id)).status === 'paused');
    const paused = await call(s, 'mission_fire', 'digest');
    expect(paused).toMatchObject({
      status: 'error',
      content: expect.stringContaining('"digest" is paused (paused by @alice: holidays)'),
    });
    await call(s, 'mission_complete', { name: 'digest' });
    await until('completed', async () => (await view(id)).status === 'completed');
    expect((await call(s, 'mission_fire', { name: 'digest' })).content).toContain('"digest" is completed');
    expect((await view(id)).runs).toHaveLength(2);
    // A completed mission takes no change, and says why (not "may or may not have run").
    await until('the directory knows it completed', async () =>
      (await missionRecordsOf(env.client.workflow, 'alice')).some(
        (r) => r.id === id && r.status === 'completed',
      ),
    );
    for (const change of [
      { name: 'digest', new_name: 'old digest' },
      { name: 'digest', goal: 'something else' },
    ])
      expect(await call(s, 'mission_update', change)).toMatchObject({
        status: 'error',
        content: expect.stringContaining('"digest" is completed: it will not run again'),
      });
    expect((await call(s, 'mission_pause', { name: 'digest' })).content).toContain('"digest" is completed');
    // Its name is free again: a new "digest" is made and is the one the name finds; the old one keeps its history.
    expect(
      (await call(s, 'mission_create', { name: 'digest', goal: 'what time is it', cadence: 'manual' }))
        .status,
    ).toBe('ok');
    const newId = await missionIdOf('digest');
    expect(newId).not.toBe(id);
    expect((await call(s, 'mission_get', { name: 'digest' })).content).toContain('— active');
    expect((await call(s, 'mission_list', {})).content.split('\n')).toEqual(
      expect.arrayContaining(['- "digest" — active', '- "digest" — completed']),
    );
    expect((await view(id)).runs).toHaveLength(2);
  });

  it('moves the old directory of everyone into one directory per owner, keeping every mission and its name', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'moved standup', goal: 'what time is it', cadence: 'manual' });
    const id = await missionIdOf('moved standup');
    // Once, every record lived in one workflow. Here is its next run as the deploy's drain starts it (its
    // continue-as-new input, now on this code), while the owners' directories do not know the records yet.
    await env.client.workflow.getHandle(missionDirectoryId('alice')).terminate('as before the move');
    const status = (i: number): MissionRecord['status'] => (i % 5 === 0 ? 'completed' : 'active');
    const records: MissionRecord[] = [
      { id, name: 'moved standup', ownerId: 'alice', shared: false, status: 'active' },
      ...Array.from({ length: 30 }, (_, i) => ({
        id: randomUUID(),
        name: `old ${i}`,
        ownerId: `owner-${i % 3}`,
        shared: i % 2 === 0,
        status: status(i),
      })),
    ];
    const legacy = await env.client.workflow.start('missionDirectoryWorkflow', {
      workflowId: MISSION_DIRECTORY_ID,
      taskQueue,
      args: [{ records }],
    });
    await legacy.result(); // it ends once every owner has their records
    for (const ownerId of ['alice', 'owner-0', 'owner-1', 'owner-2']) {
      const byId = (a: MissionRecord, b: MissionRecord) => a.id.localeCompare(b.id);
      expect((await missionRecordsOf(env.client.workflow, ownerId)).sort(byId)).toEqual(
        records.filter((r) => r.ownerId === ownerId).sort(byId),
      );
    }
    // Found by name at once, as before the move.
    expect((await call(s, 'mission_get', { name: 'moved standup' })).content).toContain(
      'Mission "moved standup"',
    );
    // An older worker's create, still sent to the old directory, is passed on: names stay unique per owner.
    const createdByOldWorker = (name: string) =>
      env.client.workflow.executeUpdateWithStart(registerMissionUpdate, {
        args: [{ id: randomUUID(), name, ownerId: 'alice', shared: false, status: 'active' }],
        startWorkflowOperation: new WithStartWorkflowOperation('missionDirectoryWorkflow', {
          workflowId: MISSION_DIRECTORY_ID,
          taskQueue,
          args: [{}],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
    await expect(createdByOldWorker('Moved Standup')).rejects.toMatchObject({
      cause: { message: expect.stringContaining('you already have a mission named "Moved Standup"') },
    });
    const passedOn = await createdByOldWorker('from an old worker');
    expect((await missionRecordsOf(env.client.workflow, 'alice')).map((r) => r.id)).toContain(passedOn.id);
  });

  it("closes the owner's prompt when the mission is completed while a run waits on it", async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'finisher', goal: 'run `echo finish`', cadence: 'manual' });
    await call(s, 'mission_fire', { name: 'finisher' });
    const id = await missionIdOf('finisher');
    const waiting = await until('the run waits on its approval', async () => {
      const v = await view(id);
      return v.gate ? v : undefined;
    });
    await s.waitFor((v) => v.gates.some((g) => g.remote && g.status === 'pending'), 'the prompt here');
    expect((await call(s, 'mission_complete', { name: 'finisher' })).status).toBe('ok');
    const closed = await s.waitFor(
      (v) => v.gates.some((g) => g.remote && g.status !== 'pending'),
      'the prompt closed',
    );
    expect(closed.gates.filter((g) => g.remote)).toEqual([
      expect.objectContaining({
        status: 'cancelled',
        resolution: expect.objectContaining({ outcome: 'cancelled' }),
      }),
    ]);
    const run = env.client.workflow.getHandle(waiting.gate!.runWorkflowId);
    await until('the run cancelled', async () => (await run.describe()).status.name === 'CANCELLED');
    // The mission ends once it hears the run's end (the run first records its cancelled gate for the audit).
    await until(
      'the mission completed',
      async () =>
        (await env.client.workflow.getHandle(missionWorkflowId(id)).describe()).status.name === 'COMPLETED' ||
        undefined,
    );
  });

  it('pauses itself after consecutive failed runs, and stays quiet on routine results in notable mode', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'looper', goal: 'loop', cadence: 'manual' });
    const id = await missionIdOf('looper');
    await call(s, 'mission_fire', { name: 'looper' });
    await until('run 1 failed', async () => (await view(id)).runs[0]?.outcome === 'failed');
    await call(s, 'mission_fire', { name: 'looper' });
    const paused = await until('paused', async () => {
      const v = await view(id);
      return v.status === 'paused' ? v : undefined;
    });
    expect(paused.reason).toMatch(/paused after 2 failed runs in a row; last: stopped at the step limit/);
    const refused = await call(s, 'mission_fire', { name: 'looper' });
    expect(refused.content).toContain('"looper" is paused (paused after 2 failed runs in a row');
    expect((await view(id)).runs).toHaveLength(2);

    await call(s, 'mission_create', {
      name: 'quiet',
      goal: 'nothing to report',
      cadence: 'manual',
      notify_mode: 'notable',
    });
    const quietId = await missionIdOf('quiet');
    await call(s, 'mission_fire', { name: 'quiet' });
    await until('the quiet run', async () => (await view(quietId)).runs[0]?.outcome === 'ok');
    expect(notes(await s.state()).some((n) => n.includes('**quiet**'))).toBe(false);
  });
});

/**
 * A kill can cut a mission tool's run anywhere (the hour-long soak found both): between a create's directory record
 * and its workflow, and after a fire was sent but before its answer. Each attempt of one call carries the call's
 * idempotency key, so the session runs them again until they answer, and these prove that doing so is safe.
 */
describe('mission tools run again after a cut', () => {
  const tools = () =>
    new MissionTools(env.client, { ...config, temporal: { ...config.temporal, taskQueue } });
  const alice = (key: string) => ({ userId: 'alice', sessionId: `session-${key}`, idempotencyKey: key });

  it('makes one mission from a create cut off between its record and its workflow, however often it is run again', async () => {
    const key = `cut-create:${randomUUID()}`;
    const name = `cut create ${key.slice(-6)}`;
    // The first attempt recorded the mission and was killed before starting its workflow.
    await registerMission(env.client, taskQueue, {
      id: uuidOf(key),
      name,
      ownerId: 'alice',
      shared: false,
      status: 'active',
    });
    const args = { name, goal: 'what time is it', cadence: 'manual' };
    const again = await tools().run('create', args, alice(key));
    expect(again).toMatchObject({
      status: 'ok',
      content: expect.stringContaining(`Created mission "${name}"`),
    });
    // A third attempt (the second's answer was lost too) answers the same and makes nothing more.
    expect(await tools().run('create', args, alice(key))).toEqual(again);
    const records = (await missionRecordsOf(env.client.workflow, 'alice')).filter((r) => r.name === name);
    expect(records).toEqual([expect.objectContaining({ id: uuidOf(key), status: 'active' })]);
    expect((await view(uuidOf(key))).name).toBe(name);
    // A different call with the same name is a second mission, and the directory refuses its name.
    expect(await tools().run('create', args, alice(`other:${randomUUID()}`))).toMatchObject({
      status: 'error',
      content: expect.stringContaining(`you already have a mission named "${name}"`),
    });
  });

  it('starts one run for a fire sent again after its attempt was cut off, and answers each attempt the same', async () => {
    const name = `refire ${randomUUID().slice(0, 6)}`;
    const created = await tools().run(
      'create',
      { name, goal: 'what time is it', cadence: 'manual', notify: 'none' },
      alice(`create:${randomUUID()}`),
    );
    expect(created.status).toBe('ok');
    const id = await missionIdOf(name);
    const key = `fire:${randomUUID()}`;
    const first = await tools().run('fire', { name }, alice(key));
    expect(first).toMatchObject({ status: 'ok', content: expect.stringContaining(`Fired "${name}"`) });
    // Sent again while the run goes, and again once it has ended (a new fire would then start a second run).
    expect(await tools().run('fire', { name }, alice(key))).toEqual(first);
    await until('run 1 ended', async () => (await view(id)).runs[0]?.outcome === 'ok');
    expect(await tools().run('fire', { name }, alice(key))).toEqual(first);
    await env.client.workflow
      .getHandle(missionWorkflowId(id))
      .signal(fireSignal, { by: 'alice', trigger: 'manual', fireId: key });
    // A new fire (another call) is a second run: the mission itself still fires.
    await tools().run('fire', { name }, alice(`fire:${randomUUID()}`));
    await until('run 2 ended', async () => (await view(id)).runs[1]?.outcome === 'ok');
    const seen = await view(id);
    expect(seen.runs.map((r) => r.n)).toEqual([1, 2]);
    expect(seen.skipped).toEqual([]);
  });

  it('says a recorded mission that never started never ran, and gives its name back', async () => {
    const name = `orphan ${randomUUID().slice(0, 6)}`;
    // What a version before runs-again left behind: a record whose workflow was never started.
    await registerMission(env.client, taskQueue, {
      id: randomUUID(),
      name,
      ownerId: 'alice',
      shared: false,
      status: 'active',
    });
    const fired = await tools().run('fire', { name }, alice(`fire:${randomUUID()}`));
    expect(fired).toMatchObject({
      status: 'error',
      content: expect.stringContaining(`"${name}" was recorded but never started`),
    });
    expect(fired.content).not.toContain('is completed');
    await until('the name is free', async () =>
      (await missionRecordsOf(env.client.workflow, 'alice')).every(
        (r) => r.name !== name || r.status === 'completed',
      ),
    );
    expect(
      await tools().run(
        'create',
        { name, goal: 'what time is it', cadence: 'manual' },
        alice(`c:${randomUUID()}`),
      ),
    ).toMatchObject({ status: 'ok' });
  });
});

export type { MissionView };

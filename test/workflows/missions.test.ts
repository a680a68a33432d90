/**
 * Missions through real tool calls (the scripted model's "call <tool> <args>"), a real worker and a real
 * Temporal server: addressing, runs, cron without pile-up, gates that pause and resume a run in place,
 * failures, notifications and per-user isolation.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialService } from '../../common/credentials/service';
import type { AppConfig } from '../../common/config';
import { missionWorkflowId } from '../../common/missions/types';
import { resumeWaitingWorkflows } from '../../gateways/oauth/resume';
import { missionViewQuery, type MissionView } from '../../workflows/missions/contract';
import { stateQuery, type Message, type SessionView } from '../../workflows/session/contract';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { createTestWorker } from '../helpers/worker';
import { testConfig } from '../helpers/config';
import { until as untilDone } from '../helpers/until';

const policy = {
  maxSteps: 3,
  missions: { maxConsecutiveFailures: 2 },
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

async function missionIdOf(s: TestSession, name: string): Promise<string> {
  const listed = await call(s, 'mission_list', {});
  const id = new RegExp(`"${name}" — \\w+ \\(id ([0-9a-f-]{36})\\)`).exec(listed.content)?.[1];
  if (!id) throw new Error(`no ${name} in ${listed.content}`);
  return id;
}

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
    const id = await missionIdOf(s, 'daily report');
    await call(s, 'routine_create', { name: 'weekly', goal: 'what time is it', cadence: 'manual' });
    const weeklyId = await missionIdOf(s, 'weekly');

    expect((await call(s, 'mission_get', { id })).content).toContain('Mission "daily report"');
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
  });

  it('fires on a cron cadence, never piles up runs behind an open gate, and resumes the run in place on approval', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', {
      name: 'cleanup',
      goal: 'run `echo cleaned`',
      cadence: '*/2 * * * * *',
    });
    const id = await missionIdOf(s, 'cleanup');
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
    await until('skipped fires', async () => (await view(id)).skipped.length >= 2);
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

  it("fails the mission with the reason when a run's approval is denied", async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'risky', goal: 'run `rm -rf /tmp/x`', cadence: 'manual' });
    await call(s, 'mission_fire', 'risky');
    const shown = await s.waitFor((v) => v.gates.some((g) => g.remote && g.status === 'pending'), 'the gate');
    const gate = shown.gates.find((g) => g.remote && g.status === 'pending')!;
    await s.decide({ gateId: gate.id, choice: 'deny', reason: 'not today' });
    const id = await missionIdOf(s, 'risky');
    const failed = await until('failed', async () => {
      const v = await view(id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(failed.reason).toContain('denied');
    expect(failed.reason).toContain('not today');
    await s.waitFor((v) => notes(v).some((n) => n.includes('**risky** failed')), 'the failure notice');
    // mission_resume makes it active again.
    await call(s, 'mission_resume', { name: 'risky' });
    await until('active', async () => (await view(id)).status === 'active');
  });

  it('pauses a run on a credential gate and resumes it in place after the owner signs in', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', {
      name: 'files',
      goal: 'fetch http://127.0.0.1:9/files with acme',
      cadence: 'manual',
    });
    await call(s, 'mission_fire', { name: 'files' });
    const id = await missionIdOf(s, 'files');
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

  it("lets anyone's sign-in resume a shared mission's run, which then acts with their credential", async () => {
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
    const listed = await call(s, 'mission_list', {}, 'dora');
    const id = /"team files" — \w+ \(id ([0-9a-f-]{36})\)/.exec(listed.content)![1]!;
    const paused = await until('paused on the sign-in', async () => {
      const v = await view(id);
      return v.gate?.kind === 'credential' ? v : undefined;
    });
    // Carol is not the owner; for a shared mission her sign-in counts.
    const credentials = CredentialService.fromConfig(config);
    await credentials.vault.put('carol', 'acme', { accessToken: 'carols-token' }, null);
    await credentials.close();
    const resumed = await until('the run found', async () => {
      const ids = await resumeWaitingWorkflows(env.client, 'carol', 'acme');
      return ids.length ? ids : undefined;
    });
    expect(resumed).toEqual([paused.gate!.runWorkflowId]);
    await until('the run finished', async () => (await view(id)).runs[0]?.outcome);
    const run = await env.client.workflow.getHandle(paused.gate!.runWorkflowId).query(stateQuery);
    expect(tools(run).at(-1)!.content).toContain("ran with @carol's Acme account");
  });

  it('pauses itself after consecutive failed runs, and stays quiet on routine results in notable mode', async () => {
    const s = new TestSession(env.client, taskQueue);
    await call(s, 'mission_create', { name: 'looper', goal: 'loop', cadence: 'manual' });
    const id = await missionIdOf(s, 'looper');
    await call(s, 'mission_fire', { name: 'looper' });
    await until('run 1 failed', async () => (await view(id)).runs[0]?.outcome === 'failed');
    await call(s, 'mission_fire', { name: 'looper' });
    const paused = await until('paused', async () => {
      const v = await view(id);
      return v.status === 'paused' ? v : undefined;
    });
    expect(paused.reason).toMatch(/paused after 2 failed runs in a row; last: stopped at the step limit/);
    await call(s, 'mission_fire', { name: 'looper' });
    await until('the fire skipped', async () =>
      (await view(id)).skipped.some((k) => k.reason.includes('paused')),
    );
    expect((await view(id)).runs).toHaveLength(2);

    await call(s, 'mission_create', {
      name: 'quiet',
      goal: 'nothing to report',
      cadence: 'manual',
      notify_mode: 'notable',
    });
    const quietId = await missionIdOf(s, 'quiet');
    await call(s, 'mission_fire', { name: 'quiet' });
    await until('the quiet run', async () => (await view(quietId)).runs[0]?.outcome === 'ok');
    expect(notes(await s.state()).some((n) => n.includes('**quiet**'))).toBe(false);
  });
});

export type { MissionView };

/**
 * The audit export against what people did: approvals, a deny with a reason, an always-allow, a question, a quorum
 * decided from two channels (Slack and the web) and an operator's resolve, in conversations that continue as new
 * every few events. `agentctl audit export` (a real process) and the operator endpoint give the same records, each
 * matching the decision as made: who, as which id, from where, what they were shown (the arguments and their digest),
 * the rule and the outcome; a tool's `secretArgs` are hidden; nobody but an operator reads it.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditChange, AuditEntry, AuditRecord } from '../../common/audit';
import { payloadDigest } from '../../common/seal-digest';
import { missionWorkflowId } from '../../common/ids';
import { ownMissions } from '../../infra/missions-directory';
import { pauseSignal } from '../../workflows/missions/contract';
import { Tally } from '../chaos/summary';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const TOKEN = 'audit-token-for-tests-0123456789';

let env: TestWorkflowEnvironment;
let stack: Stack;
const tally = new Tally();
const forgery = new Tally();
const started = new Date(Date.now() - 60_000);

beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      reminderAfter: 'never',
      // Every few events a new run: the records must be read from every run's history.
      continueAsNewAfterEvents: 20,
      approvers: ['bob', 'carol'],
      users: { bob: { slack: ['U0BOB0001'] }, carol: {} },
      tools: {
        shell_execute: { approvers: ['bob', 'carol'] },
        // A tool whose arguments the export hides (its digest stays).
        http_request: { policy: 'ask', secretArgs: ['url', 'body'] },
      },
    },
    env: { AUDIT_AUTH_TOKEN: TOKEN, TEMPORAL_UI_USERS: 'olivia' },
  });
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('audit: nobody but an operator reads the audit export');
    if (forgery.runs) forgery.finish('audit: nothing unsealed is recorded as a person’s own act');
  } finally {
    await stack?.stop();
    await env?.teardown();
  }
});

async function cli(...args: string[]) {
  return await run(process.execPath, [path.join(ROOT, 'bin/agentctl.js'), ...args], {
    env: { ...process.env, ...stack.env },
  });
}

async function endpoint(
  query: string,
  headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
) {
  const response = await fetch(`http://127.0.0.1:${stack.port}/operator/audit?${query}`, { headers });
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') };
}

const jsonl = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditRecord);

describe('the audit export', () => {
  it('exports every decision as the people made it, from every run of every conversation', async () => {
    const done = (session: string) =>
      stack.web.waitFor(session, (v) => v.status === 'idle', 'the turn', 60_000, 'alice');

    // 1. bob approves alice's command on the web.
    await stack.web.say('audit-a', 'run `echo one`', 'alice');
    const first = await stack.web.pendingGate('audit-a');
    await stack.web.decide('audit-a', first.id, 'approve', {}, 'bob');
    await done('audit-a');
    // 2. alice denies her own next command, with a reason.
    await stack.web.say('audit-a', 'run `echo two`', 'alice');
    const second = await stack.web.pendingGate('audit-a');
    await stack.web.decide('audit-a', second.id, 'deny', { reason: 'not on a Friday' }, 'alice');
    await done('audit-a');
    // 3. alice always allows a command in another conversation.
    await stack.web.say('audit-b', 'run `echo three`', 'alice');
    const third = await stack.web.pendingGate('audit-b');
    await stack.web.decide('audit-b', third.id, 'always', { scope: 'session' }, 'alice');
    await done('audit-b');
    // 4. a question, answered by typing.
    await stack.web.say('audit-b', 'ask one', 'alice');
    const question = await stack.web.pendingGate('audit-b');
    await stack.web.say('audit-b', '1', 'alice');
    await done('audit-b');
    // 5. a request whose arguments the policy marks secret, approved by carol.
    await stack.web.say('audit-c', 'post https://example.com hello', 'alice');
    const secret = await stack.web.pendingGate('audit-c');
    await stack.web.decide('audit-c', secret.id, 'deny', {}, 'carol');
    await done('audit-c');

    // 6. a gate closed by Stop: the workflow settles it in a cancelled turn, and it is recorded all the same.
    await stack.web.say('audit-d', 'run `echo stopped`', 'alice');
    const stopped = await stack.web.pendingGate('audit-d');
    expect((await stack.web.request('POST', '/sessions/audit-d/stop', {}, 'alice')).status).toBe(202);
    await done('audit-d');

    const { stdout, stderr } = await until(
      'six records',
      async () => {
        const out = await cli('audit', 'export', '--since', started.toISOString());
        return jsonl(out.stdout).length >= 6 ? out : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const records = jsonl(stdout);
    expect(stderr).toContain(`${records.length} record`);
    const byGate = new Map(records.map((r) => [r.gateId, r]));
    expect(records.map((r) => r.gateId).sort()).toEqual(
      [first.id, second.id, third.id, question.id, secret.id, stopped.id].sort(),
    );
    expect(byGate.get(stopped.id)).toMatchObject({ outcome: 'stopped', by: { id: 'alice' } });
    // Oldest first.
    expect(records.map((r) => r.at)).toEqual([...records.map((r) => r.at)].sort());

    expect(byGate.get(first.id)).toMatchObject({
      type: 'gate',
      workflowId: 'session:web:audit-a',
      conversation: 'web',
      gate: 'approval',
      tool: 'shell_execute',
      outcome: 'approved',
      requester: { id: 'alice', via: 'web' },
      by: { id: 'bob', person: 'bob', via: 'web' },
      approvals: [{ id: 'bob', via: 'web' }],
      shown: { args: { command: 'echo one' }, argsDigest: payloadDigest({ command: 'echo one' }) },
      rule: { approvalsNeeded: 1, selfApprove: true },
    });
    expect(byGate.get(second.id)).toMatchObject({
      outcome: 'denied',
      by: { id: 'alice' },
      reason: 'not on a Friday',
      shown: { args: { command: 'echo two' } },
    });
    expect(byGate.get(third.id)).toMatchObject({
      workflowId: 'session:web:audit-b',
      outcome: 'always',
      grant: { scope: 'session', pattern: expect.stringContaining('echo three') },
    });
    expect(byGate.get(question.id)).toMatchObject({
      gate: 'question',
      outcome: 'answered',
      by: { id: 'alice' },
    });
    expect(byGate.get(question.id)!.questions).toHaveLength(1);
    // The secret tool: its arguments hidden, their digest kept, the subject left out.
    const hidden = byGate.get(secret.id)!;
    expect(hidden).toMatchObject({ tool: 'http_request', outcome: 'denied', by: { id: 'carol' } });
    expect(Object.values(hidden.shown!.args).filter((v) => v === '(secret)').length).toBeGreaterThanOrEqual(
      1,
    );
    expect(JSON.stringify(hidden)).not.toContain('example.com');
    expect(hidden.shown!.argsDigest).toMatch(/^[0-9a-f]{64}$/);

    // Several runs: the conversations continued as new, and their records are all there.
    const runs: string[] = [];
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = 'session:web:audit-a'` }))
      runs.push(execution.runId);
    expect(runs.length).toBeGreaterThan(1);

    // The log line for a log shipper names who and what, never the arguments.
    const logged = await until('the audit log lines', () => {
      const lines = stack.worker.output.split('\n').filter((line) => line.includes('"message":"audit"'));
      return lines.length >= 6 ? lines : undefined;
    });
    expect(logged.join('\n')).not.toContain('echo one');
    expect(logged.join('\n')).toContain(first.id);

    // A person's records: bob's are those he decided; carol's hers.
    const bobs = jsonl(
      (await cli('audit', 'export', '--since', started.toISOString(), '--person', 'U0BOB0001')).stdout,
    );
    expect(bobs.map((r) => r.gateId)).toEqual([first.id]);

    // The same over HTTP, as CSV too.
    const overHttp = await endpoint(`since=${encodeURIComponent(started.toISOString())}`);
    expect(overHttp.status).toBe(200);
    expect(overHttp.type).toContain('application/x-ndjson');
    expect(jsonl(overHttp.text)).toEqual(records);
    const csv = await endpoint(`since=${encodeURIComponent(started.toISOString())}&format=csv`);
    expect(csv.type).toContain('text/csv');
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toMatch(/^at,workflowId,conversation,gateId,gate,tool,outcome,by,byId,via,/);
    expect(lines).toHaveLength(records.length + 1);
    expect(csv.text).toContain('not on a Friday');

    // Nobody else reads it.
    const attempts: [string, Record<string, string>][] = [
      ['no credentials', {}],
      ['a wrong token', { authorization: 'Bearer audit-token-for-tests-0123456780' }],
      ['a signed-in person who is not an operator', stack.web.headers('alice')],
      ['an approver who is not an operator', stack.web.headers('bob')],
    ];
    for (const [what, headers] of attempts) {
      const refused = await endpoint(`since=${encodeURIComponent(started.toISOString())}`, headers);
      tally.attempt(
        refused.status === 401 || refused.status === 403,
        () => `${what}: ${refused.status} ${refused.text.slice(0, 120)}`,
      );
      tally.check(!refused.text.includes('echo one'), () => `${what} read a record`);
    }
    // An operator's sign-in reads it.
    expect(
      (await endpoint(`since=${encodeURIComponent(started.toISOString())}`, stack.web.headers('olivia')))
        .status,
    ).toBe(200);
    // Bad input is told, not guessed.
    expect((await endpoint('since=yesterday-ish')).status).toBe(400);
    expect((await endpoint('since=2026-01-01&format=xml')).status).toBe(400);
    expect((await endpoint('')).status).toBe(400);
    await expect(cli('audit', 'export')).rejects.toMatchObject({
      stderr: expect.stringContaining('--since'),
    });
  }, 300_000);
  it('exports the changes people make without a gate: grants revoked, missions created and changed', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const idle = (session: string, tools: number) =>
      stack.web.waitFor(
        session,
        (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length >= tools,
        'the turn',
        60_000,
        'alice',
      );
    // Two standing grants: one for this conversation, one everywhere; both revoked from the web page.
    await stack.web.say('audit-g', 'run `echo kept`', 'alice');
    await stack.web.decide('audit-g', (await stack.web.pendingGate('audit-g')).id, 'always', {
      scope: 'session',
    });
    await idle('audit-g', 1);
    await stack.web.say('audit-g', 'run `date`', 'alice');
    await stack.web.decide('audit-g', (await stack.web.pendingGate('audit-g')).id, 'always', {
      scope: 'user',
    });
    await idle('audit-g', 2);
    const listed = await stack.web.request('GET', '/grants?sessionId=audit-g', undefined, 'alice');
    const grants = listed.body.grants as { id: string; scope: string; pattern?: string }[];
    expect(grants.map((g) => g.scope).sort()).toEqual(['session', 'user']);
    for (const grant of grants) {
      const body = {
        grantId: grant.id,
        scope: grant.scope,
        ...(grant.scope === 'session' ? { sessionId: 'audit-g' } : {}),
      };
      expect((await stack.web.request('POST', '/grants/revoke', body, 'alice')).status).toBe(202);
    }
    // Someone else's revocation of a grant that is not theirs changes nothing, and is not recorded as a revocation.
    await stack.web.request('POST', '/grants/revoke', { grantId: grants[0]!.id, scope: 'user' }, 'carol');

    // A mission, created and changed through the mission tools (which ask nobody by default).
    const missionCalls = [
      'call mission_create {"name": "audit standup", "goal": "what time is it", "cadence": "0 9 * * 1-5", "timezone": "Europe/Berlin"}',
      'call mission_pause {"name": "audit standup", "reason": "holiday"}',
      'call mission_update {"name": "audit standup", "goal": "what time is it in Tokyo"}',
      'call mission_resume {"name": "audit standup"}',
      'call mission_complete {"name": "audit standup", "reason": "done"}',
    ];
    for (const [n, call] of missionCalls.entries()) {
      await stack.web.say('audit-m', call, 'alice');
      await idle('audit-m', n + 1);
      // Before it completes: a pause in alice's name that the mission tools never sealed, sent straight to Temporal.
      if (call.startsWith('call mission_resume')) {
        const [mission] = await ownMissions(env.client, 'alice');
        await env.client.workflow
          .getHandle(missionWorkflowId(mission!.id))
          .signal(pauseSignal, { by: 'alice', reason: 'forged' });
      }
    }

    const changes = await until(
      'the changes in the export',
      async () => {
        const out = jsonl((await cli('audit', 'export', '--since', since)).stdout) as unknown as AuditEntry[];
        const found = out.filter((r): r is AuditChange => r.type !== 'gate');
        return found.length >= 8 ? found : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const revoked = changes.filter((c) => c.type === 'grant');
    expect(revoked).toHaveLength(2);
    expect(revoked.find((c) => c.grant!.scope === 'session')).toMatchObject({
      action: 'revoked',
      workflowId: 'session:web:audit-g',
      conversation: 'web',
      by: { id: 'alice', person: 'alice', via: 'web' },
      grant: { tool: 'shell_execute', pattern: expect.stringContaining('echo kept') },
    });
    expect(revoked.find((c) => c.grant!.scope === 'user')).toMatchObject({
      action: 'revoked',
      workflowId: 'user:alice',
      conversation: 'user',
      by: { id: 'alice' },
      grant: { tool: 'shell_execute' },
    });
    const mission = changes.filter((c) => c.type === 'mission');
    expect(mission.map((c) => c.action)).toEqual([
      'created',
      'paused',
      'updated',
      'resumed',
      'paused',
      'completed',
    ]);
    // The forged pause is there (it paused the mission), but not as alice's own act: nobody sealed it.
    const forged = mission.find((c) => c.reason === 'forged')!;
    forgery.attempt(
      forged.unverified === true,
      () => 'an unsealed mission change was recorded as its owner’s',
    );
    for (const change of mission.filter((c) => c !== forged)) expect(change.unverified).toBeUndefined();
    mission.splice(mission.indexOf(forged), 1);
    for (const change of mission)
      expect(change).toMatchObject({
        conversation: 'mission',
        by: { id: 'alice', via: 'web' },
        mission: { name: 'audit standup' },
      });
    expect(mission[0]!.mission!.changes).toMatchObject({
      goal: 'what time is it',
      cadence: { kind: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
    });
    expect(mission[1]).toMatchObject({ reason: 'holiday' });
    expect(mission[2]!.mission!.changes).toEqual({ goal: 'what time is it in Tokyo' });
    expect(mission[4]).toMatchObject({ reason: 'done' });

    // A person's export holds their changes; nobody else's.
    const carols = jsonl((await cli('audit', 'export', '--since', since, '--person', 'carol')).stdout);
    expect(carols).toEqual([]);
    // The CSV names each change in the same columns as a decision: what, who, where, and its type.
    const csv = await endpoint(`since=${encodeURIComponent(since)}&format=csv`);
    const rows = csv.text.trim().split('\n');
    expect(rows[0]).toMatch(/,type$/);
    expect(rows.filter((row) => row.endsWith(',mission'))).toHaveLength(6);
    expect(
      rows.some((row) => row.includes(',audit standup,paused,alice,alice,web,') && row.includes('holiday')),
    ).toBe(true);
  }, 300_000);
});

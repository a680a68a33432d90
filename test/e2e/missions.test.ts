/**
 * Missions end to end through the web chat: a webhook-cadence mission triggered over HTTP with its own
 * secret, and the named-routine scenario with an OpenAI-compatible model that answers in seconds, as real
 * ones do: a run whose approval is denied ends, the mission fails with the reason, and the owner is told.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missionWorkflowId } from '../../common/missions/types';
import { missionViewQuery } from '../../workflows/missions/contract';
import { missionRecordsOf } from '../helpers/missions';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { FakeOpenAi, type ChatRequest, type Reply } from '../helpers/fake-openai';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;
beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({ temporalAddress: env.address });
});
afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

describe('mission webhooks', () => {
  it('starts a run with the body as context for the right secret only, and posts the result', async () => {
    const sessionId = 'missions-webhook';
    await stack.web.say(
      sessionId,
      'call mission_create {"name": "deploy watch", "goal": "what time is it", "cadence": "webhook"}',
    );
    const created = await stack.web.waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
      'the mission created',
    );
    const content = (created.transcript.find((m) => m.role === 'tool') as { content: string }).content;
    // Neither the id nor the secret reaches the transcript: the owner gets both by the mission's name.
    expect(content).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(content).toContain('/api/missions/webhook?name=deploy%20watch');
    const mine = await stack.web.request('GET', '/missions/webhook?name=deploy%20watch');
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ mission: 'deploy watch', header: 'X-Mission-Secret' });
    const id = /\/hooks\/missions\/([0-9a-f-]{36})$/.exec(mine.body.url as string)![1]!;
    expect(await stack.web.request('GET', `/missions/${id}/webhook`)).toMatchObject({ status: 200 });
    for (const path of ['/missions/webhook?name=deploy%20watch', `/missions/${id}/webhook`])
      expect(await stack.web.request('GET', path, undefined, 'bob')).toMatchObject({ status: 404 });

    const hook = (secret: string, body: string) =>
      fetch(`${stack.web.baseUrl}/hooks/missions/${id}`, {
        method: 'POST',
        headers: { 'x-mission-secret': secret, 'content-type': 'text/plain' },
        body,
      });
    expect((await hook('wrong', 'x')).status).toBe(401);
    expect((await hook(mine.body.secret, 'x'.repeat(5_000))).status).toBe(413);
    const handle = env.client.workflow.getHandle(missionWorkflowId(id));
    expect((await handle.query(missionViewQuery)).runs).toHaveLength(0);

    expect((await hook(mine.body.secret, 'release 4.2 deployed to production')).status).toBe(202);
    await stack.web.waitFor(
      sessionId,
      (v) =>
        v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('**deploy watch** (run 1)')),
      'the result posted',
    );
    const run = (await handle.query(missionViewQuery)).runs[0]!;
    expect(run.trigger).toBe('webhook');
    const runView = await env.client.workflow.getHandle(run.workflowId).query(stateQuery);
    expect(JSON.stringify(runView.transcript)).toContain('release 4.2 deployed to production');
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).not.toContain(mine.body.secret);

    // A caller that got no answer sends the call again with its Idempotency-Key: one trigger, one run.
    const keyed = (key: string) =>
      fetch(`${stack.web.baseUrl}/hooks/missions/${id}`, {
        method: 'POST',
        headers: { 'x-mission-secret': mine.body.secret, 'idempotency-key': key },
        body: 'release 4.3 deployed',
      });
    expect((await keyed('has space')).status).toBe(400);
    expect((await keyed('x'.repeat(201))).status).toBe(400);
    expect((await keyed('delivery-4.3')).status).toBe(202);
    await until(
      'run 2 ended',
      async () => (await handle.query(missionViewQuery)).runs[1]?.outcome !== undefined,
    );
    expect((await keyed('delivery-4.3')).status).toBe(202);
    // Signals are taken in order: once the next delivery's run has ended, the repeat was taken (or dropped) before.
    expect((await keyed('delivery-4.4')).status).toBe(202);
    await until(
      'run 3 ended',
      async () => (await handle.query(missionViewQuery)).runs[2]?.outcome !== undefined,
    );
    const seen = await handle.query(missionViewQuery);
    expect(seen.runs).toHaveLength(3);
    expect(seen.skipped).toEqual([]);
    expect(seen.fireIds).toEqual(['webhook:delivery-4.3', 'webhook:delivery-4.4']);
  });

  it('refuses a trigger while a run waits on a person, saying why, instead of dropping its body', async () => {
    const sessionId = 'missions-webhook-gated';
    await stack.web.say(
      sessionId,
      'call mission_create {"name": "gated hook", "goal": "run `echo gated`", "cadence": "webhook"}',
    );
    await stack.web.answered(sessionId);
    const mine = await stack.web.request('GET', '/missions/webhook?name=gated%20hook');
    expect(mine.status).toBe(200);
    const hook = (body: string) =>
      fetch(mine.body.url as string, {
        method: 'POST',
        headers: { 'x-mission-secret': mine.body.secret as string, 'content-type': 'text/plain' },
        body,
      });
    expect((await hook('first')).status).toBe(202);
    const id = /\/hooks\/missions\/([0-9a-f-]{36})$/.exec(mine.body.url as string)![1]!;
    const handle = env.client.workflow.getHandle(missionWorkflowId(id));
    await until('the run waiting on its approval', async () => !!(await handle.describe()).memo?.waitingFor);
    const second = await hook('second');
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: string }).error).toContain('this trigger was not taken');
    expect((await handle.query(missionViewQuery)).runs).toHaveLength(1);
  });
});

/**
 * The model of the named-routine report: in the owner's conversation it creates the mission and fires it;
 * in the run it wants a destructive command, and after the denial it would explain itself (in seconds).
 */
function routineModel(request: ChatRequest): Reply {
  const id = `call_${request.messages.length}`;
  const text = (role: string) =>
    request.messages
      .filter((m) => m.role === role)
      .map((m) => m.content ?? '')
      .join('\n');
  const last = request.messages.at(-1)!;
  if (text('user').includes('(Mission "nightly cleanup", run')) {
    if (last.role === 'tool') return { text: `I could not clean up: ${last.content}` };
    return { toolCalls: [{ id, name: 'shell_execute', args: { command: 'rm -rf /tmp/nightly-cleanup' } }] };
  }
  if (last.role === 'tool') return { text: `Done: ${last.content}` };
  const said = last.content ?? '';
  if (said.includes('create'))
    return {
      toolCalls: [
        {
          id,
          name: 'routine_create',
          args: { name: 'nightly cleanup', goal: 'Clean the temp directory', cadence: 'manual' },
        },
      ],
    };
  if (said.includes('fire'))
    return { toolCalls: [{ id, name: 'mission_fire', args: { _args: ['nightly cleanup'] } }] };
  return { text: 'Noted.' };
}

describe('a mission run with a model that takes seconds', () => {
  let fake: FakeOpenAi;
  let openAiStack: Stack;
  beforeAll(async () => {
    fake = await new FakeOpenAi(routineModel, { latency: [2_000, 3_000] }).start();
    openAiStack = await startStack({
      temporalAddress: env.address,
      env: {
        MODEL_PROVIDER: 'openai',
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: 'sk-test',
        MODEL: 'fake-model',
      },
    });
  });
  afterAll(async () => {
    await openAiStack?.stop();
    await fake?.stop();
  });

  const notes = (v: SessionView) =>
    v.transcript.flatMap((m) => (m.role === 'assistant' && m.synthetic ? [m.text] : []));

  it('ends a run whose approval is denied, fails the mission with the reason, and tells the owner', async () => {
    const web = openAiStack.web;
    const sessionId = 'missions-denied-run';
    await web.say(sessionId, 'create a routine that cleans the temp directory every night');
    await web.answered(sessionId);
    await web.say(sessionId, 'fire it now');
    const gate = await web.pendingGate(sessionId);
    expect(gate).toMatchObject({
      toolName: 'shell_execute',
      args: { command: 'rm -rf /tmp/nightly-cleanup' },
      remote: { missionName: 'nightly cleanup' },
    });
    expect((await web.decide(sessionId, gate.id, 'deny', { reason: 'not on the shared box' })).status).toBe(
      202,
    );

    const told = await web.waitFor(
      sessionId,
      (v) => notes(v).some((n) => n.startsWith('**nightly cleanup** failed')),
      "the mission's failure told here",
      90_000,
    );
    expect(notes(told).find((n) => n.startsWith('**nightly cleanup** failed'))).toContain(
      'shell_execute denied',
    );
    expect(told.gates.find((g) => g.id === gate.id)!.resolution).toMatchObject({
      outcome: 'denied',
      reason: 'not on the shared box',
    });

    const records = await missionRecordsOf(env.client.workflow, 'alice');
    const record = records.find((r) => r.name === 'nightly cleanup')!;
    const mission = await env.client.workflow.getHandle(missionWorkflowId(record.id)).query(missionViewQuery);
    expect(mission.status).toBe('failed');
    expect(mission.reason).toContain('not on the shared box');
    expect(mission.running).toBeNull();
    const run = env.client.workflow.getHandle(mission.runs[0]!.workflowId);
    const ended = await until('the run ended', async () => {
      const status = (await run.describe()).status.name;
      return status === 'RUNNING' ? undefined : status;
    });
    expect(['CANCELLED', 'COMPLETED']).toContain(ended);
    // No workflow task of the run failed (an unhandled rejection fails one and keeps the run Running).
    const history = await run.fetchHistory();
    expect(history.events!.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
    expect(fake.refusals).toEqual([]);
  });
});

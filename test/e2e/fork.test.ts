/**
 * Fork and retry with real processes (a worker, a gateway, a Temporal server; the model a strict fake of the
 * Chat Completions API with two models): a fork after three shell calls runs none of them again (no `runTool` in its
 * history, its own sandbox empty) and its new calls go through the gates again; the original's approval left open at
 * the fork still decides there after a worker SIGKILL; a retry by another person answers with the model they chose,
 * from the recorded results, as that person; the lineage is on both sides and searchable; and `agentctl` forks too.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { Message, SessionView } from '../../workflows/session/contract';
import { FakeOpenAi, type ChatRequest } from '../helpers/fake-openai';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
let env: TestWorkflowEnvironment;
let stack: Stack;
let fake: FakeOpenAi;

/** "run `a` and `b`": one shell call per command; after results, a summary that names the model that wrote it. */
function reply(request: ChatRequest, index: number) {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') {
    const ran = request.messages.filter((m) => m.role === 'tool').length;
    return { text: `${ran} commands ran, says ${request.model}` };
  }
  const text = typeof last.content === 'string' ? last.content : '';
  const commands = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  if (/^run /.test(text) && commands.length)
    return {
      toolCalls: commands.map((command, i) => ({
        id: `call_${index}_${i}`,
        name: 'shell_execute',
        args: { command },
      })),
    };
  return { text: `hello from ${request.model}` };
}

beforeAll(async () => {
  env = await startTestTemporal();
  fake = await new FakeOpenAi(reply, { latency: [20, 80] }).start();
  stack = await startStack({
    temporalAddress: env.address,
    // olivia may decide here, so she may read (and fork) alice's conversations; bob may not.
    policy: { approvers: ['olivia'] },
    env: {
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'test-key',
      MODEL: 'gpt-a',
      MODEL_FALLBACKS: 'openai:gpt-b',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
  await env?.teardown();
});

const view = async (sessionId: string, user = 'alice') =>
  (await stack.web.request('GET', `/sessions/${sessionId}`, undefined, user)).body as SessionView;

const linesIn = (sessionId: string) => {
  const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${sessionId}`), 'runs.txt');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
};

/** The activities a conversation's workflow ran, by type, from its Temporal history. */
async function activitiesOf(sessionId: string): Promise<string[]> {
  const history = await env.client.workflow.getHandle(`session:web:${sessionId}`).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return type ? [type] : [];
  });
}

const answers = (v: SessionView) =>
  v.transcript.filter(
    (m): m is Extract<Message, { role: 'assistant' }> => m.role === 'assistant' && !m.synthetic && !!m.text,
  );

/** Approves every pending gate of the conversation as `user`, until `count` have been approved. */
async function approveAll(sessionId: string, count: number, user = 'alice'): Promise<void> {
  const approved = new Set<string>();
  while (approved.size < count) {
    const v = await stack.web.waitFor(
      sessionId,
      (x) => x.gates.some((g) => g.status === 'pending' && !approved.has(g.id)),
      'a gate to approve',
      60_000,
      user,
    );
    for (const gate of v.gates.filter((g) => g.status === 'pending' && !approved.has(g.id))) {
      expect((await stack.web.decide(sessionId, gate.id, 'approve', {}, user)).status).toBe(202);
      approved.add(gate.id);
    }
  }
}

/** A conversation of alice's: three shell calls approved and answered; then a fourth call left waiting. */
async function conversationWithThreeRuns(): Promise<{
  sessionId: string;
  answerId: string;
  openGate: string;
}> {
  const sessionId = randomUUID();
  await stack.web.say(
    sessionId,
    'run `echo one >> runs.txt` and `echo two >> runs.txt` and `echo three >> runs.txt`',
  );
  await approveAll(sessionId, 3);
  const done = await stack.web.waitFor(
    sessionId,
    (v) => v.status === 'idle' && answers(v).some((m) => m.text.startsWith('3 commands ran')),
    'the three runs answered',
  );
  const answerId = answers(done).find((m) => m.text.startsWith('3 commands ran'))!.id;
  await stack.web.say(sessionId, 'run `echo four >> runs.txt`');
  const open = await stack.web.pendingGate(sessionId);
  return { sessionId, answerId, openGate: open.id };
}

describe('fork and retry', () => {
  it('forks after three shell calls running none of them again; the original and its open approval stay as they were', async () => {
    const original = await conversationWithThreeRuns();
    expect(linesIn(original.sessionId)).toBe(3);

    const made = await stack.web.request('POST', `/sessions/${original.sessionId}/fork`, {
      messageId: original.answerId,
    });
    expect(made.status).toBe(201);
    const forkId = made.body.sessionId as string;
    expect(made.body.forkedFrom).toMatchObject({
      workflowId: `session:web:${original.sessionId}`,
      messageId: original.answerId,
      mode: 'through',
      by: 'alice',
    });
    const forked = await stack.web.waitFor(forkId, (v) => v.status === 'idle', 'the fork to open');
    // The three results are there as records; the call left waiting in the original is not part of the fork.
    expect(
      forked.transcript.filter((m) => m.role === 'tool').map((m) => (m as { status: string }).status),
    ).toEqual(['ok', 'ok', 'ok']);
    expect(forked.transcript.at(-1)).toMatchObject({ id: original.answerId, role: 'assistant' });
    expect(forked.gates).toEqual([]);
    expect(forked.forkedFrom).toMatchObject({ messageId: original.answerId, by: 'alice' });
    expect(forked.notices.map((n) => n.text).join(' ')).toContain('Nothing above runs again');
    expect(await activitiesOf(forkId)).not.toContain('runTool');
    expect(linesIn(forkId)).toBe(0);

    // The original's approval, open when the fork was made, still decides there, after a worker SIGKILL.
    await stack.restartWorker();
    expect((await stack.web.decide(original.sessionId, original.openGate, 'approve')).status).toBe(202);
    await stack.web.waitFor(
      original.sessionId,
      (v) => v.status === 'idle' && answers(v).some((m) => m.text.startsWith('4 commands ran')),
      'the original to run its fourth call',
    );
    expect(linesIn(original.sessionId)).toBe(4);
    expect(linesIn(forkId)).toBe(0);

    // In the fork, a new call goes through the gates again: nothing approved in the original carries over.
    await stack.web.say(forkId, 'run `echo again >> runs.txt`');
    const gate = await stack.web.pendingGate(forkId);
    expect(gate).toMatchObject({ kind: 'approval', toolName: 'shell_execute', requesterId: 'alice' });
    await stack.web.decide(forkId, gate.id, 'approve');
    await stack.web.waitFor(
      forkId,
      (v) => v.status === 'idle' && answers(v).length === 2,
      'the fork to answer',
    );
    expect(linesIn(forkId)).toBe(1);
    expect(linesIn(original.sessionId)).toBe(4);
    expect((await activitiesOf(forkId)).filter((a) => a === 'runTool')).toHaveLength(1);

    // The lineage on the original's side, from visibility (AgentForkedFrom): what the page lists.
    let forks: { sessionId: string; by: string; messageId: string }[] = [];
    for (let i = 0; i < 50 && !forks.length; i++) {
      forks = (await stack.web.request('GET', `/sessions/${original.sessionId}/forks`)).body.forks;
      if (!forks.length) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(forks).toEqual([
      expect.objectContaining({ sessionId: forkId, by: 'alice', messageId: original.answerId }),
    ]);
    expect(fake.refusals).toEqual([]);
  });

  it('retries an answer with another model as the person who asked, from the recorded results, side by side', async () => {
    const original = await conversationWithThreeRuns();
    const requestsBefore = fake.requests.length;
    // olivia (an approver) may not retry alice's answer: it would act on alice's words with olivia's sign-ins.
    const refused = await stack.web.request(
      'POST',
      `/sessions/${original.sessionId}/fork`,
      { messageId: original.answerId, mode: 'retry' },
      'olivia',
    );
    expect(refused).toMatchObject({ status: 400, body: { error: expect.stringContaining('only @alice') } });
    // alice retries her own with the fallback model.
    const made = await stack.web.request('POST', `/sessions/${original.sessionId}/fork`, {
      messageId: original.answerId,
      mode: 'retry',
      model: 'openai:gpt-b',
    });
    expect(made.status).toBe(201);
    const forkId = made.body.sessionId as string;
    const retried = await stack.web.waitFor(
      forkId,
      (v) => v.status === 'idle' && answers(v).length > 0,
      'the retried answer',
    );
    expect(answers(retried)).toEqual([
      expect.objectContaining({ text: '3 commands ran, says gpt-b', model: 'openai:gpt-b' }),
    ]);
    expect(retried.forkedFrom).toMatchObject({
      mode: 'retry',
      model: 'openai:gpt-b',
      by: 'alice',
      original: { text: '3 commands ran, says gpt-a', model: 'openai:gpt-a' },
    });
    // One model call, to the chosen model, carrying the three recorded results; no tool ran.
    const sent = fake.requests.slice(requestsBefore).filter((r) => r.model === 'gpt-b');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.messages.filter((m) => m.role === 'tool')).toHaveLength(3);
    expect(await activitiesOf(forkId)).not.toContain('runTool');
    expect(fake.refusals).toEqual([]);
    // Later turns of the retry keep its model.
    await stack.web.say(forkId, 'and now?');
    const later = await stack.web.waitFor(
      forkId,
      (v) => v.status === 'idle' && answers(v).length === 2,
      'a later answer',
    );
    expect(answers(later).at(-1)).toMatchObject({ text: 'hello from gpt-b', model: 'openai:gpt-b' });
    // Usage by the model that answered: the fork's two calls on gpt-b, the original's on gpt-a; and in the memo.
    expect(later.usageByModel).toEqual({ 'openai:gpt-b': expect.objectContaining({ calls: 2 }) });
    expect(Object.keys((await view(original.sessionId)).usageByModel ?? {})).toEqual(['openai:gpt-a']);
    const memo = (await env.client.workflow.getHandle(`session:web:${forkId}`).describe()).memo;
    expect(memo?.models).toEqual(['openai:gpt-b']);
  });

  it("forks another person's conversation as the forker: nothing is answered on the owner's words, and the fork is the forker's", async () => {
    const original = await conversationWithThreeRuns();
    const firstMessage = (await view(original.sessionId)).transcript[0]!.id;
    const requestsBefore = fake.requests.length;
    const made = await stack.web.request(
      'POST',
      `/sessions/${original.sessionId}/fork`,
      { messageId: firstMessage },
      'olivia',
    );
    expect(made.status).toBe(201);
    const forkId = made.body.sessionId as string;
    const forked = await stack.web.waitFor(forkId, (v) => v.status === 'idle', 'the fork', 60_000, 'olivia');
    expect(forked.ownerId).toBe('olivia');
    // alice's message is there, unanswered and not marked interrupted: it waits for olivia's own words.
    expect(forked.transcript).toEqual([
      expect.objectContaining({ id: firstMessage, role: 'user', userId: 'alice' }),
    ]);
    expect(forked.notices.map((n) => n.text).join(' ')).toContain("someone else's");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake.requests.length).toBe(requestsBefore);
    // The fork is olivia's: alice, the original's owner, does not see it, nor find it among the original's forks;
    // olivia (an approver) sees every fork.
    expect((await stack.web.request('GET', `/sessions/${forkId}`, undefined, 'alice')).status).toBe(404);
    let seen: { sessionId: string }[] = [];
    for (let i = 0; i < 50 && !seen.length; i++) {
      seen = (await stack.web.request('GET', `/sessions/${original.sessionId}/forks`, undefined, 'olivia'))
        .body.forks;
      if (!seen.length) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(seen.map((f) => f.sessionId)).toEqual([forkId]);
    expect((await stack.web.request('GET', `/sessions/${original.sessionId}/forks`)).body.forks).toEqual([]);
    // olivia's own message is answered as olivia, and its command asks olivia's approval.
    await stack.web.say(forkId, 'run `echo mine >> runs.txt`', 'olivia');
    const gate = await stack.web.pendingGate(forkId, 'olivia');
    expect(gate).toMatchObject({ kind: 'approval', requesterId: 'olivia' });
  });

  it('refuses, in words, forks it cannot make, and hides conversations the caller may not use', async () => {
    const original = await conversationWithThreeRuns();
    const fork = (body: unknown, user = 'alice') =>
      stack.web.request('POST', `/sessions/${original.sessionId}/fork`, body, user);
    expect(await fork({ messageId: original.answerId }, 'bob')).toMatchObject({ status: 404 });
    expect(await fork({ messageId: original.answerId, mode: 'retry', model: 'openai:gpt-z' })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('openai:gpt-a, openai:gpt-b') },
    });
    expect(await fork({ messageId: 'no-such-message' })).toMatchObject({
      status: 400,
      body: { error: 'no message no-such-message in this conversation' },
    });
    const firstUser = (await view(original.sessionId)).transcript[0]!.id;
    expect(await fork({ messageId: firstUser, mode: 'retry' })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('only an answer') },
    });
    // A step that called tools cannot be retried: that would run them again.
    const step = (await view(original.sessionId)).transcript.find(
      (m) => m.role === 'assistant' && m.toolCalls.length > 0,
    )!;
    expect(await fork({ messageId: step.id, mode: 'retry' })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('retrying it would run them again') },
    });
    expect(await fork({ messageId: original.answerId, extra: 1 })).toMatchObject({ status: 400 });
    expect(await fork('not json at all')).toMatchObject({ status: 400 });
    expect(
      (await stack.web.request('GET', `/sessions/${original.sessionId}/forks`, undefined, 'bob')).status,
    ).toBe(404);
  });

  it('forks from agentctl as the person named, and shows the lineage there', async () => {
    const original = await conversationWithThreeRuns();
    const cli = async (...args: string[]) =>
      (
        await run(process.execPath, [path.join(ROOT, 'bin/agentctl.js'), ...args], {
          env: { ...process.env, ...stack.env },
        })
      ).stdout;
    const printed = await cli('fork', original.sessionId, '--at', original.answerId, '--as', 'olivia');
    const forkWorkflowId = /into (session:web:[0-9a-f-]+)/.exec(printed)?.[1];
    expect(forkWorkflowId, printed).toBeDefined();
    const forkId = forkWorkflowId!.replace('session:web:', '');
    const shown = await (async () => {
      for (let i = 0; ; i++) {
        const text = await cli('show', forkWorkflowId!).catch(() => '');
        if (text.includes('forked from') || i > 40) return text;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    expect(shown).toContain(
      `forked from session:web:${original.sessionId} at ${original.answerId} by @olivia`,
    );
    expect(shown).toContain(`owner @olivia`);
    expect(await activitiesOf(forkId)).not.toContain('runTool');
    let listed = '';
    for (let i = 0; i < 50 && !listed.includes(forkWorkflowId!); i++) {
      listed = await cli('forks', original.sessionId);
      if (!listed.includes(forkWorkflowId!)) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(listed).toContain(`${forkWorkflowId}  by @olivia at ${original.answerId}`);
    const refused = await cli(
      'fork',
      original.sessionId,
      '--at',
      original.answerId,
      '--as',
      'olivia',
      '--model',
      'x:y',
    ).catch((e: { stderr: string }) => e.stderr);
    expect(refused).toContain('"x:y" is not a model of this deployment');
  });
});

import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi, toolThenAnswer } from '../helpers/fake-openai';
import { historyText } from '../helpers/history';
import { freePort, gatewayProcess, gatewayReady } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let fake: FakeOpenAi;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  fake = await new FakeOpenAi(toolThenAnswer('shell_execute', { command: 'echo e2e-$((20+22))' })).start();
  stack = await startStack({
    temporalAddress: env.address,
    env: {
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-test-e2e',
      MODEL: 'fake-model',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
  await env?.teardown();
});

describe('end to end: gateway + worker + Temporal + an OpenAI-compatible model', () => {
  it('shows the tool call for approval, runs it when approved over HTTP, and delivers the answer', async () => {
    const sessionId = 'e2e-approve';
    const sent = await stack.web.say(sessionId, 'please compute something');
    expect(sent.status).toBe(202);

    const gate = await stack.web.pendingGate(sessionId);
    expect(gate).toMatchObject({
      toolName: 'shell_execute',
      args: { command: 'echo e2e-$((20+22))' },
      requesterId: 'alice',
    });
    const view = await stack.web.waitFor(
      sessionId,
      (v) => v.status === 'waiting_approval',
      'waiting_approval',
    );
    expect((view as { temporalUrl?: string }).temporalUrl).toBe(
      'http://localhost:8233/namespaces/default/workflows/session%3Aweb%3Ae2e-approve',
    );

    expect((await stack.web.decide(sessionId, gate.id, 'approve')).status).toBe(202);
    const done = await stack.web.answered(sessionId);
    expect(done.transcript.at(-1)).toMatchObject({
      role: 'assistant',
      text: expect.stringContaining('e2e-42'),
    });

    const toolMessage = fake.requests.at(-1)!.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain('e2e-42');
    const offered = fake.requests[0]!.tools!.map((t) => t.function.name);
    expect(offered.slice(0, 4)).toEqual(['shell_execute', 'http_request', 'current_time', 'ask_user']);
    expect(offered).toEqual(expect.arrayContaining(['mission_create', 'routine_create', 'mission_fire']));
    expect(fake.authorizations[0]).toBe('Bearer sk-test-e2e');
  });

  it('lists the session for the web chat and rejects malformed input with a clear error', async () => {
    const list = await stack.web.waitFor('e2e-approve', () => true, 'the session');
    expect(list.sessionId).toBe('session:web:e2e-approve');
    const sessions = await stack.web.request('GET', '/sessions');
    expect(sessions.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain('e2e-approve');

    const empty = await stack.web.say('e2e-approve', '   ');
    expect(empty).toMatchObject({ status: 400, body: { error: expect.stringContaining('empty') } });
    const badChoice = await stack.web.decide('e2e-approve', 'g', 'maybe');
    expect(badChoice.status).toBe(400);
    const unknown = await stack.web.decide('no-such-session', 'g', 'approve');
    expect(unknown).toMatchObject({ status: 404 });
    const badUser = await stack.web.request('GET', '/me', undefined, 'bad user!');
    expect(badUser.status).toBe(400);
  });

  it('keeps the model key out of workflow history, transcripts and logs', async () => {
    const history = await env.client.workflow.getHandle('session:web:e2e-approve').fetchHistory();
    const text = historyText(history);
    expect(text).toContain('e2e-42');
    expect(text).not.toContain('sk-test-e2e');
    const view = await stack.web.waitFor('e2e-approve', () => true, 'the session');
    expect(JSON.stringify(view)).not.toContain('sk-test-e2e');
    expect(stack.worker.output + stack.gateway.output).not.toContain('sk-test-e2e');
    expect(stack.gateway.output).toContain('"decision accepted"');
  });

  it('believes the user header only from WEB_TRUSTED_PROXIES, never a header the page chose', async () => {
    const port = await freePort();
    const guarded = gatewayProcess({
      ...stack.env,
      PORT: String(port),
      WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
      WEB_TRUSTED_PROXIES: '10.9.9.9/32',
    });
    await guarded.start(gatewayReady(port));
    try {
      const me = (p: number, headers: Record<string, string>) =>
        fetch(`http://127.0.0.1:${p}/api/me`, { headers });
      // 127.0.0.1 is not the configured proxy: the header is refused, and nothing else names a user.
      expect((await me(port, { 'x-forwarded-user': 'alice' })).status).toBe(403);
      expect((await me(port, { 'x-agent-user': 'alice' })).status).toBe(401);
      expect((await me(port, { authorization: 'Bearer anything' })).status).toBe(401);
      // The stack's own gateway trusts 127.0.0.1: the proxy's header wins over anything the page sends.
      const ok = await me(stack.port, { 'x-forwarded-user': 'alice', 'x-agent-user': 'mallory' });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ userId: 'alice', mode: 'proxy' });
    } finally {
      await guarded.kill('SIGTERM');
    }
  });
});

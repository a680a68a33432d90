/**
 * The AG-UI 1.0 endpoint driven by the protocol's own client (`@ag-ui/client`'s HttpAgent), every event it receives
 * also checked against `@ag-ui/core`'s schemas: a turn streams, every open gate is an interrupt, a resume decides it
 * as the signed-in person (once, after the worker and the gateway were SIGKILLed in between), a gate decided
 * elsewhere is a typed error naming who decided, a reconnect gets the messages and the open interrupts again, and the
 * coverage rule, other people's threads and foreign origins are refused.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { HttpAgent, type BaseEvent, type Interrupt } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { SessionView } from '../../workflows/session/contract';
import { aguiInput, postAgui, type AguiEvent } from '../helpers/agui';
import { freePort, workerProcess, workerReady } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

const FRONT_END = 'http://front-end.test:5173';
let env: TestWorkflowEnvironment;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  const port = await freePort();
  stack = await startStack({
    temporalAddress: env.address,
    port,
    env: {
      AGUI_ALLOWED_ORIGINS: FRONT_END,
      // Answers stream to the gateway word by word, at a pace a person can interrupt.
      STREAM_URL: `http://127.0.0.1:${port}`,
      STREAM_TOKEN: 'agui-stream-token-0123456789',
      SCRIPTED_WORD_MS: '30',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

const url = () => `http://127.0.0.1:${stack.port}/api/agui`;
const thread = () => `agui-${randomBytes(5).toString('hex')}`;

/** An HttpAgent as a front end holds one, recording every event after checking it against the protocol's schemas. */
function agent(threadId: string, user = 'alice') {
  const events: BaseEvent[] = [];
  const invalid: string[] = [];
  const a = new HttpAgent({ url: url(), headers: stack.web.headers(user), threadId });
  a.subscribe({
    onEvent: ({ event }) => {
      const checked = EventSchemas.safeParse(event);
      if (!checked.success) invalid.push(`${event.type}: ${checked.error.message.slice(0, 300)}`);
      events.push(event);
    },
  });
  const say = async (text: string) => {
    a.addMessage({ id: randomUUID(), role: 'user', content: text });
    return await run();
  };
  const run = async (
    resume?: { interruptId: string; status: 'resolved' | 'cancelled'; payload?: unknown }[],
  ) => {
    const from = events.length;
    let error: unknown;
    await a
      .runAgent({ runId: randomUUID(), ...(resume ? { resume } : {}) })
      .catch((e: unknown) => (error = e));
    const mine = events.slice(from);
    expect(invalid).toEqual([]);
    const finished = mine.find((e) => e.type === 'RUN_FINISHED') as
      (BaseEvent & { outcome?: { type: string; interrupts?: Interrupt[] } }) | undefined;
    const failed = mine.find((e) => e.type === 'RUN_ERROR') as
      (BaseEvent & { code?: string; message: string }) | undefined;
    return { events: mine, finished, failed, error, interrupts: finished?.outcome?.interrupts ?? [] };
  };
  return { a, events, say, run };
}

const textOf = (events: BaseEvent[]) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => (e as BaseEvent & { delta: string }).delta)
    .join('');

const view = async (threadId: string) =>
  (await stack.web.request('GET', `/sessions/${threadId}`)).body as SessionView;

const linesIn = (threadId: string, file: string) => {
  const full = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${threadId}`), file);
  return existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length : 0;
};

describe('AG-UI endpoint', () => {
  it('streams a turn as a run, with the answer, and ends it with success', async () => {
    const t = agent(thread());
    const { events, finished } = await t.say('hello over ag-ui');
    expect(events[0]).toMatchObject({ type: 'RUN_STARTED', protocolVersion: '1.0' });
    expect(textOf(events)).toContain('hello over ag-ui');
    expect(finished?.outcome).toEqual({ type: 'success' });
    expect(events.some((e) => e.type === 'STATE_SNAPSHOT')).toBe(true);
    // The client's own list of messages is the conversation: the person's message and the answer.
    expect(t.a.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('streams the answer while it is written, and a client that cancels the run stops the turn, keeping what was written', async () => {
    const threadId = thread();
    const t = agent(threadId);
    const long = Array.from({ length: 150 }, (_, i) => `word${i}`).join(' ');
    let deltas = 0;
    t.a.subscribe({
      onTextMessageContentEvent: () => {
        // Cancelled by the person after a few words: what HttpAgent's abortRun does (the request is aborted).
        if (++deltas === 3) t.a.abortRun();
      },
    });
    await t.say(long);
    expect(deltas).toBeGreaterThanOrEqual(3);
    const stopped = await stack.web.waitFor(
      threadId,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'assistant' && m.stopped === true),
      'the stopped answer',
    );
    const answer = stopped.transcript.find((m) => m.role === 'assistant');
    expect(answer?.role === 'assistant' && answer.text).toMatch(/\(stopped\)$/);
    expect(answer?.role === 'assistant' && answer.text.includes('word149')).toBe(false);
  });

  it('ends a run at an approval with an interrupt, and a resume approves it: the command runs once', async () => {
    const threadId = thread();
    const t = agent(threadId);
    const first = await t.say('run `echo agui >> once.txt`');
    expect(first.finished?.outcome?.type).toBe('interrupt');
    expect(first.interrupts).toHaveLength(1);
    const [interrupt] = first.interrupts;
    expect(interrupt).toMatchObject({
      reason: 'tool_approval',
      message: expect.stringContaining('Approval needed: shell_execute requested by @alice'),
      toolCallId: expect.any(String),
      expiresAt: expect.any(String),
      metadata: { kind: 'approval', mayDecide: true, choices: ['approve', 'deny', 'always', 'edit'] },
    });
    expect(interrupt!.responseSchema).toMatchObject({ required: ['choice'] });
    // The tool call is part of the stream, with its arguments, before the run ends.
    expect(first.events.some((e) => e.type === 'TOOL_CALL_START')).toBe(true);
    expect(linesIn(threadId, 'once.txt')).toBe(0);

    const resumed = await t.run([
      { interruptId: interrupt!.id, status: 'resolved', payload: { choice: 'approve' } },
    ]);
    expect(resumed.failed).toBeUndefined();
    expect(resumed.finished?.outcome).toEqual({ type: 'success' });
    expect(resumed.events.some((e) => e.type === 'TOOL_CALL_RESULT')).toBe(true);
    expect(linesIn(threadId, 'once.txt')).toBe(1);
    const shown = await view(threadId);
    expect(shown.gates[0]).toMatchObject({
      status: 'resolved',
      resolution: { outcome: 'approved', by: 'alice' },
    });
  });

  it('asks a question as an interrupt with the question’s own schema, and takes the answer from a resume', async () => {
    const threadId = thread();
    const t = agent(threadId);
    const first = await t.say('ask one');
    const [interrupt] = first.interrupts;
    expect(interrupt).toMatchObject({ reason: 'input_required', metadata: { kind: 'question' } });
    const schema = interrupt!.responseSchema as { properties: Record<string, { enum?: string[] }> };
    const [label, property] = Object.entries(schema.properties)[0]!;
    const option = property.enum?.[0] ?? (property as { items?: { enum: string[] } }).items!.enum[0]!;
    // A wrong answer is refused in words, and nothing is sent.
    const wrong = await t.run([{ interruptId: interrupt!.id, status: 'resolved', payload: { nope: 'x' } }]);
    expect(wrong.failed).toMatchObject({ code: 'interrupt_payload_invalid' });
    // The client keeps the interrupt open after a refused resume; answered properly it resolves.
    const done = await t.run([
      { interruptId: interrupt!.id, status: 'resolved', payload: { [label]: option } },
    ]);
    expect(done.failed).toBeUndefined();
    expect(done.finished?.outcome?.type).toBe('success');
    const gate = (await view(threadId)).gates[0]!;
    expect(gate.resolution).toMatchObject({ outcome: 'answered', by: 'alice' });
  });

  it('refuses a resume of a gate decided elsewhere, naming who decided, and changes nothing', async () => {
    const threadId = thread();
    const t = agent(threadId);
    const first = await t.say('run `echo elsewhere >> e.txt`');
    const [interrupt] = first.interrupts;
    // Decided in the web app meanwhile.
    expect((await stack.web.decide(threadId, interrupt!.id, 'deny', { reason: 'not today' })).status).toBe(
      202,
    );
    await stack.web.waitFor(threadId, (v) => v.status === 'idle', 'the denial');
    const late = await t.run([
      { interruptId: interrupt!.id, status: 'resolved', payload: { choice: 'approve' } },
    ]);
    expect(late.failed).toMatchObject({
      code: 'interrupt_already_decided',
      message: expect.stringMatching(/already denied by @alice on the web at \d\d:\d\d UTC/),
    });
    expect(linesIn(threadId, 'e.txt')).toBe(0);
  });

  it('turns the workflow’s own refusal of a resume into a typed error, and the gate stays open for a proper one', async () => {
    const threadId = thread();
    const t = agent(threadId);
    const first = await t.say('run `echo checked >> k.txt`');
    const [interrupt] = first.interrupts;
    // Arguments the tool's schema refuses: only the workflow checks them, and says so to this person.
    const refused = await t.run([
      { interruptId: interrupt!.id, status: 'resolved', payload: { choice: 'edit', args: { command: 42 } } },
    ]);
    expect(refused.failed).toMatchObject({
      code: 'resume_refused',
      message: expect.stringMatching(/edited arguments were refused/),
    });
    expect((await view(threadId)).gates[0]?.status).toBe('pending');
    const approved = await t.run([
      { interruptId: interrupt!.id, status: 'resolved', payload: { choice: 'approve' } },
    ]);
    expect(approved.finished?.outcome?.type).toBe('success');
    expect(linesIn(threadId, 'k.txt')).toBe(1);
  });

  it('a reconnect with only the thread id gets the messages and the open interrupts again, from a fresh client', async () => {
    const threadId = thread();
    const first = await agent(threadId).say('run `echo reconnect >> r.txt`');
    const fresh = agent(threadId);
    const again = await fresh.run();
    expect(again.events.some((e) => e.type === 'MESSAGES_SNAPSHOT')).toBe(true);
    expect(again.interrupts.map((i) => i.id)).toEqual(first.interrupts.map((i) => i.id));
    expect(
      fresh.a.messages.some((m) => m.role === 'user' && m.content === 'run `echo reconnect >> r.txt`'),
    ).toBe(true);
    // The fresh client may decide it now: a deny with a reason reaches the model.
    const denied = await fresh.run([
      { interruptId: again.interrupts[0]!.id, status: 'resolved', payload: { choice: 'deny', reason: 'no' } },
    ]);
    expect(denied.finished?.outcome?.type).toBe('success');
    expect(linesIn(threadId, 'r.txt')).toBe(0);
  });

  it('decides a gate after the worker and the gateway were SIGKILLed, through the new gateway: once', async () => {
    const threadId = thread();
    const t = agent(threadId);
    const first = await t.say('run `echo durable >> d.txt`');
    const [interrupt] = first.interrupts;
    await stack.restartWorker();
    await stack.restartGateway();
    const resumed = await t.run([
      { interruptId: interrupt!.id, status: 'resolved', payload: { choice: 'approve' } },
    ]);
    expect(resumed.finished?.outcome?.type).toBe('success');
    expect(linesIn(threadId, 'd.txt')).toBe(1);
  });

  it('takes a resume while no worker runs (from the gate memo), and finishes the run once a worker is back', async () => {
    const threadId = thread();
    const t = agent(threadId);
    const first = await t.say('run `echo no-worker >> w.txt`');
    const [interrupt] = first.interrupts;
    await stack.worker.kill('SIGKILL');
    const resumed = t.run([
      { interruptId: interrupt!.id, status: 'resolved', payload: { choice: 'approve' } },
    ]);
    // Nothing can run meanwhile; the run waits (with keepalives), then the worker comes back.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(linesIn(threadId, 'w.txt')).toBe(0);
    stack.worker = workerProcess(stack.env);
    await stack.worker.start(workerReady);
    const done = await resumed;
    expect(done.failed).toBeUndefined();
    expect(done.finished?.outcome?.type).toBe('success');
    expect(linesIn(threadId, 'w.txt')).toBe(1);
  });

  it('keeps to the protocol’s coverage rule and to who may read a thread', async () => {
    const threadId = thread();
    const first = await agent(threadId).say('run `echo cover >> c.txt`');
    const post = async (body: unknown, user = 'alice', headers: Record<string, string> = {}) =>
      await postAgui(url(), body, { ...stack.web.headers(user), ...headers });
    const input = (extra: Record<string, unknown>) => aguiInput(threadId, extra);
    const errorOf = (events: AguiEvent[]) => events.find((e) => e.type === 'RUN_ERROR');
    // A new message while an interrupt is open, without resume: refused as the protocol says.
    const unanswered = await post(
      input({ messages: [{ id: randomUUID(), role: 'user', content: 'and now?' }] }),
    );
    expect(errorOf(unanswered.events)).toMatchObject({ code: 'interrupts_unanswered' });
    // A resume naming an interrupt that does not exist, or the same one twice.
    expect(
      errorOf((await post(input({ resume: [{ interruptId: 'nope', status: 'resolved' }] }))).events),
    ).toMatchObject({
      code: 'interrupt_unknown',
    });
    const id = first.interrupts[0]!.id;
    const twice = input({
      resume: [
        { interruptId: id, status: 'resolved', payload: { choice: 'approve' } },
        { interruptId: id, status: 'resolved', payload: { choice: 'approve' } },
      ],
    });
    expect(errorOf((await post(twice)).events)).toMatchObject({ code: 'interrupt_duplicate' });
    expect(linesIn(threadId, 'c.txt')).toBe(0);
    // Someone else's thread is not there at all; malformed input is a 400 in words.
    expect((await post(input({}), 'mallory')).status).toBe(404);
    expect((await post({ threadId, messages: 'x' })).status).toBe(400);
    expect((await post(input({ threadId: '../etc' }))).status).toBe(400);
    // CORS only for the named front end: its preflight is answered, a foreign origin's request refused.
    const preflight = await fetch(url(), { method: 'OPTIONS', headers: { origin: FRONT_END } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(FRONT_END);
    expect((await fetch(url(), { method: 'OPTIONS', headers: { origin: 'http://evil.test' } })).status).toBe(
      403,
    );
    expect((await post(input({}), 'alice', { origin: 'http://evil.test' })).status).toBe(403);
    const allowed = await post(input({}), 'alice', { origin: FRONT_END });
    expect(allowed.status).toBe(200);
    expect(linesIn(threadId, 'c.txt')).toBe(0);
  });

  it('forks a thread over AG-UI (forwardedProps.fork): nothing runs again, a new message goes through the gates, a retry writes the answer again', async () => {
    const original = thread();
    const t = agent(original);
    const { interrupts } = await t.say('run `echo once >> runs.txt`');
    const approved = await t.run([
      { interruptId: interrupts[0]!.id, status: 'resolved', payload: { choice: 'approve' } },
    ]);
    expect(approved.finished?.outcome).toEqual({ type: 'success' });
    expect(linesIn(original, 'runs.txt')).toBe(1);
    const answerId = (await view(original)).transcript.findLast((m) => m.role === 'assistant')!.id;

    // Fork through the answer, with a new message: an edit-and-send-again, as a chat front end does it.
    const forkThread = thread();
    const f = agent(forkThread);
    f.a.addMessage({ id: randomUUID(), role: 'user', content: 'run `echo again >> runs.txt`' });
    const forked = await f.a
      .runAgent({
        runId: randomUUID(),
        forwardedProps: { fork: { threadId: original, messageId: answerId } },
      })
      .then(() => f.events);
    const finished = forked.find((e) => e.type === 'RUN_FINISHED') as
      (BaseEvent & { outcome?: { type: string; interrupts?: Interrupt[] } }) | undefined;
    expect(forked[0]).toMatchObject({ type: 'RUN_STARTED', threadId: forkThread });
    // The fork's own gate for the new call: nothing approved in the original carries over.
    expect(finished?.outcome?.type).toBe('interrupt');
    const gate = finished!.outcome!.interrupts![0]!;
    expect(JSON.stringify(gate)).toContain('echo again');
    // The client now holds the original's messages (a snapshot) and its new one.
    expect(f.a.messages.some((m) => m.id === answerId)).toBe(true);
    expect(linesIn(forkThread, 'runs.txt')).toBe(0);
    const done = await f.run([{ interruptId: gate.id, status: 'resolved', payload: { choice: 'approve' } }]);
    expect(done.finished?.outcome).toEqual({ type: 'success' });
    expect(linesIn(forkThread, 'runs.txt')).toBe(1);
    expect(linesIn(original, 'runs.txt')).toBe(1);
    expect((await view(forkThread)).forkedFrom).toMatchObject({
      workflowId: `session:web:${original}`,
      by: 'alice',
    });

    // A retry: the answer written again at once, from the recorded result (the command does not run again).
    const retryThread = thread();
    const r = agent(retryThread);
    await r.a.runAgent({
      runId: randomUUID(),
      forwardedProps: { fork: { threadId: original, messageId: answerId, mode: 'retry' } },
    });
    const retried = r.events.find((e) => e.type === 'RUN_FINISHED') as BaseEvent & {
      outcome?: { type: string };
    };
    expect(retried?.outcome).toEqual({ type: 'success' });
    expect(textOf(r.events).length).toBeGreaterThan(0);
    expect(linesIn(retryThread, 'runs.txt')).toBe(0);
    expect(linesIn(original, 'runs.txt')).toBe(1);

    // Refused: another person's thread (as if it did not exist), a taken threadId, a bad fork, a retry with a message.
    const post = (threadId: string, fork: unknown, user = 'alice', extra: Record<string, unknown> = {}) =>
      postAgui(url(), aguiInput(threadId, { forwardedProps: { fork }, ...extra }), stack.web.headers(user));
    expect((await post(thread(), { threadId: original, messageId: answerId }, 'bob')).status).toBe(404);
    // The same fork sent again (its answer lost on the way) follows the fork it made; another one there is refused.
    const again = await post(forkThread, { threadId: original, messageId: answerId });
    expect(again.status).toBe(200);
    expect(again.events.at(-1)?.type).toBe('RUN_FINISHED');
    expect((await post(original, { threadId: forkThread, messageId: answerId })).status).toBe(409);
    // A new message with the id of one the fork holds would be taken as that one, and lost: refused.
    const firstId = (await view(original)).transcript[0]!.id;
    const reused = await post(thread(), { threadId: original, messageId: answerId }, 'alice', {
      messages: [{ id: firstId, role: 'user', content: 'edited' }],
    });
    expect(reused.status).toBe(400);
    expect((await post(thread(), { threadId: original })).status).toBe(400);
    expect((await post(thread(), { threadId: original, messageId: 'nope' })).status).toBe(400);
    const withMessage = await post(
      thread(),
      { threadId: original, messageId: answerId, mode: 'retry' },
      'alice',
      { messages: [{ id: randomUUID(), role: 'user', content: 'hi' }] },
    );
    expect(withMessage.status).toBe(400);
  });
});

/**
 * The A2A endpoint driven by the protocol's own client (`@a2a-js/sdk`'s ClientFactory over JSON-RPC, A2A 1.0), from
 * the agent card it publishes: a turn is a task that completes with the answer; a task waiting on an approval or a
 * question is input-required with the gate as an interrupt in a data part; a resume to that task decides it as the
 * signed-in caller (once, after the worker and the gateway were SIGKILLed in between); a gate decided elsewhere is a
 * typed error naming who decided; CancelTask is Stop; streaming follows the task; other people's tasks and
 * conversations are "not found"; and a 0.3 client (`message/send`) is answered too.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { Interrupt } from '@ag-ui/core';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { SessionView } from '../../workflows/session/contract';
import { freePort } from '../helpers/processes';
import { a2aClientFor, a2aMessage, refusal, textPart } from '../helpers/a2a-client';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({ temporalAddress: env.address, port: await freePort() });
});

afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

const base = () => `http://127.0.0.1:${stack.port}`;

const clientFor = (user = 'alice') => a2aClientFor(stack, user);
const message = a2aMessage;

const request = (m: Message) => ({ tenant: '', message: m, configuration: undefined, metadata: undefined });

/** Says `text` in the conversation, or in a new one the server names when no contextId is given. */
async function say(client: Client, text: string, contextId?: string): Promise<Task> {
  const result = await client.sendMessage(request(message([textPart(text)], contextId ? { contextId } : {})));
  if (!('status' in result)) throw new Error('expected a task');
  return result;
}

async function resume(
  client: Client,
  task: Task,
  entries: { interruptId: string; status: 'resolved' | 'cancelled'; payload?: unknown }[],
): Promise<Task> {
  const part: Part = {
    content: { $case: 'data', value: { resume: entries } },
    metadata: undefined,
    filename: '',
    mediaType: 'application/json',
  };
  const result = await client.sendMessage(
    request(message([part], { contextId: task.contextId, taskId: task.id })),
  );
  if (!('status' in result)) throw new Error('expected a task');
  return result;
}

/** A resume approving one interrupt, as a person's click does. */
const approve = (client: Client, task: Task, interruptId: string) =>
  resume(client, task, [{ interruptId, status: 'resolved', payload: { choice: 'approve' } }]);

/** The interrupts an input-required task carries, from its status message's data part. */
function interruptsOf(task: Task): Interrupt[] {
  const data = task.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content;
  return data?.$case === 'data' ? (data.value as { interrupts: Interrupt[] }).interrupts : [];
}

const answerOf = (task: Task) =>
  task.artifacts
    .flatMap((a) => a.parts)
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('');

const linesIn = (contextId: string, file: string) => {
  const full = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${contextId}`), file);
  return existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length : 0;
};

const view = async (contextId: string) =>
  (await stack.web.request('GET', `/sessions/${contextId}`)).body as SessionView;

describe('A2A endpoint', () => {
  it('publishes its card, answers a message as a completed task, and lists and reads it again', async () => {
    const client = await clientFor();
    const card = await client.getAgentCard();
    expect(card.supportedInterfaces.map((i) => [new URL(i.url).pathname, i.protocolVersion])).toEqual([
      ['/api/a2a', '1.0'],
      ['/api/a2a', '0.3'],
    ]);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.securitySchemes.proxy?.scheme).toMatchObject({
      $case: 'apiKeySecurityScheme',
      value: { location: 'header', name: 'identity' },
    });

    const task = await say(client, 'hello there');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // A new conversation is named by the server: a caller-chosen id could be someone else's squat.
    const contextId = task.contextId;
    expect(contextId).toMatch(/^a2a-[0-9a-f]{32}$/);
    expect((await refusal(say(client, 'hello', `mine-${randomBytes(4).toString('hex')}`))).name).toBe(
      'TaskNotFoundError',
    );
    expect(answerOf(task)).toMatch(/\S/);
    expect(task.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
    // Any gateway reads it from the conversation: the same task, and the conversation's list of tasks.
    const again = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(again)).toBe(answerOf(task));
    const listed = await client.listTasks({
      tenant: '',
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: undefined,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
    // The web app shows the same conversation, owned by the caller.
    expect((await view(contextId)).ownerId).toBe('alice');
  });

  it('waits on an approval as input-required, and a resume after the worker and the gateway were SIGKILLed runs the command once', async () => {
    const client = await clientFor();
    const waiting = await say(client, 'run `echo a2a >> once.txt`');
    const contextId = waiting.contextId;
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [interrupt] = interruptsOf(waiting);
    expect(interrupt).toMatchObject({
      reason: 'tool_approval',
      message: expect.stringContaining('Approval needed: shell_execute requested by @alice'),
      metadata: { kind: 'approval', choices: ['approve', 'deny', 'always', 'edit'] },
    });
    expect(linesIn(contextId, 'once.txt')).toBe(0);

    await stack.restartWorker();
    await stack.restartGateway();
    const fresh = await clientFor();
    // Still waiting, read through the new gateway.
    expect((await fresh.getTask({ tenant: '', id: waiting.id, historyLength: 0 })).status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    );
    const done = await approve(fresh, waiting, interrupt!.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.id).toBe(waiting.id);
    expect(linesIn(contextId, 'once.txt')).toBe(1);
    expect((await view(contextId)).gates[0]).toMatchObject({
      status: 'resolved',
      resolution: { outcome: 'approved', by: 'alice', via: 'a2a' },
    });
    // The same resume again decides nothing more, and says who decided, and where.
    const twice = await refusal(approve(fresh, waiting, interrupt!.id));
    expect(twice).toMatchObject({
      code: 'interrupt_already_decided',
      message: expect.stringMatching(/already approved by @alice over A2A at \d\d:\d\d UTC/),
    });
    expect(linesIn(contextId, 'once.txt')).toBe(1);
  });

  it('asks a question as input-required with its own schema, and completes with the answer', async () => {
    const client = await clientFor();
    const waiting = await say(client, 'ask one');
    const contextId = waiting.contextId;
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [interrupt] = interruptsOf(waiting);
    expect(interrupt).toMatchObject({ reason: 'input_required', metadata: { kind: 'question' } });
    const schema = interrupt!.responseSchema as { properties: Record<string, { enum?: string[] }> };
    const [label, property] = Object.entries(schema.properties)[0]!;
    const option = property.enum?.[0] ?? (property as { items?: { enum: string[] } }).items!.enum[0]!;
    const wrong = await refusal(
      resume(client, waiting, [{ interruptId: interrupt!.id, status: 'resolved', payload: { nope: 'x' } }]),
    );
    expect(wrong.code).toBe('interrupt_payload_invalid');
    const done = await resume(client, waiting, [
      { interruptId: interrupt!.id, status: 'resolved', payload: { [label]: option } },
    ]);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await view(contextId)).gates[0]!.resolution).toMatchObject({ outcome: 'answered', by: 'alice' });
  });

  it('tells a resume of a gate decided in the web app who decided it, and runs nothing', async () => {
    const client = await clientFor();
    const waiting = await say(client, 'run `echo elsewhere >> e.txt`');
    const contextId = waiting.contextId;
    const [interrupt] = interruptsOf(waiting);
    expect((await stack.web.decide(contextId, interrupt!.id, 'deny', { reason: 'not today' })).status).toBe(
      202,
    );
    await stack.web.waitFor(contextId, (v) => v.status === 'idle', 'the denial');
    const late = await refusal(approve(client, waiting, interrupt!.id));
    expect(late).toMatchObject({
      code: 'interrupt_already_decided',
      message: expect.stringMatching(/already denied by @alice on the web at \d\d:\d\d UTC/),
    });
    expect(linesIn(contextId, 'e.txt')).toBe(0);
  });

  it('streams a task to its approval and, resumed, to its answer; CancelTask is Stop', async () => {
    const client = await clientFor();
    const states: TaskState[] = [];
    let task: Task | undefined;
    for await (const event of client.sendMessageStream(
      request(message([textPart('run `echo streamed >> s.txt`')])),
    )) {
      const payload = event.payload;
      if (payload?.$case === 'task') task = payload.value;
      if (payload?.$case === 'statusUpdate') states.push(payload.value.status!.state);
    }
    const contextId = task!.contextId;
    expect(contextId).toMatch(/^a2a-/);
    const waiting = await client.getTask({ tenant: '', id: task!.id, historyLength: undefined });
    expect(states.at(-1) ?? task!.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [interrupt] = interruptsOf(waiting);
    const after: string[] = [];
    for await (const event of client.sendMessageStream(
      request(
        message(
          [
            {
              content: {
                $case: 'data',
                value: {
                  resume: [
                    { interruptId: interrupt!.id, status: 'resolved', payload: { choice: 'approve' } },
                  ],
                },
              },
              metadata: undefined,
              filename: '',
              mediaType: 'application/json',
            },
          ],
          { contextId, taskId: waiting.id },
        ),
      ),
    ))
      after.push(event.payload?.$case ?? '');
    expect(after).toContain('artifactUpdate');
    const completed = await client.getTask({ tenant: '', id: waiting.id, historyLength: undefined });
    expect(completed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(linesIn(contextId, 's.txt')).toBe(1);

    // Stop: a task waiting on its approval is cancelled, its gate closes as stopped, nothing runs.
    const second = await say(client, 'run `echo cancelled >> c.txt`', contextId);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const cancelled = await client.cancelTask({ tenant: '', id: second.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(linesIn(contextId, 'c.txt')).toBe(0);
    expect((await refusal(client.cancelTask({ tenant: '', id: second.id, metadata: undefined }))).name).toBe(
      'TaskNotCancelableError',
    );
  });

  it("keeps other people's tasks and conversations hidden, refuses what it does not take in words, and answers a 0.3 client", async () => {
    const alice = await clientFor('alice');
    const bob = await clientFor('bob');
    const waiting = await say(alice, 'run `echo private >> p.txt`');
    const contextId = waiting.contextId;
    const [interrupt] = interruptsOf(waiting);
    for (const call of [
      () => bob.getTask({ tenant: '', id: waiting.id, historyLength: undefined }),
      () => approve(bob, waiting, interrupt!.id),
      () => say(bob, 'let me in', contextId),
      () => bob.cancelTask({ tenant: '', id: waiting.id, metadata: undefined }),
    ])
      expect((await refusal(call())).name).toBe('TaskNotFoundError');
    expect(linesIn(contextId, 'p.txt')).toBe(0);
    // Text to an open task, a resume without a task, a file: each refused with what to do instead.
    const text = await refusal(
      alice.sendMessage(request(message([textPart('approve')], { contextId, taskId: waiting.id }))),
    );
    expect(text).toMatchObject({ code: 'text_to_task', message: expect.stringContaining('without taskId') });
    // Text into the conversation while her decision is open would be read as a typed reply: refused too.
    const typed = await refusal(say(alice, 'approve', contextId));
    expect(typed).toMatchObject({
      code: 'interrupts_unanswered',
      message: expect.stringContaining(interrupt!.id),
    });
    expect(linesIn(contextId, 'p.txt')).toBe(0);
    const file = await refusal(
      alice.sendMessage(
        request(
          message(
            [
              {
                content: { $case: 'url', value: 'https://x.test/a.png' },
                metadata: undefined,
                filename: 'a.png',
                mediaType: 'image/png',
              },
            ],
            { contextId },
          ),
        ),
      ),
    );
    expect(file.message).toContain('only text parts');
    // No listing across conversations: a context id is required.
    expect(
      (
        await refusal(
          alice.listTasks({
            tenant: '',
            contextId: '',
            status: TaskState.TASK_STATE_UNSPECIFIED,
            pageSize: undefined,
            pageToken: '',
            historyLength: undefined,
            statusTimestampAfter: undefined,
            includeArtifacts: undefined,
          }),
        )
      ).message,
    ).toContain('contextId');

    // A 0.3 client: message/send with kind-tagged parts, no version header.
    const legacy = await fetch(`${base()}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...stack.web.headers('alice') },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: randomUUID(),
            role: 'user',
            parts: [{ kind: 'text', text: 'hello from 0.3' }],
          },
        },
      }),
    });
    const answer = (await legacy.json()) as {
      id: number;
      result?: { kind: string; status: { state: string } };
    };
    expect(answer).toMatchObject({ id: 7, result: { kind: 'task', status: { state: 'completed' } } });
    // Unsigned calls never reach the handler.
    const unsigned = await fetch(`${base()}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: waiting.id } }),
    });
    expect(unsigned.status).toBe(401);
  });

  it("fires a mission as a task: its run's approval an interrupt, decided by a resume, completed with its result; someone else's fire of a shared mission stays its owner's", async () => {
    const alice = await clientFor('alice');
    const made = await say(
      alice,
      'call mission_create {"name": "a2a nightly", "goal": "run `echo nightly-report`", "cadence": "manual", "shared": true}',
    );
    expect(made.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const fire = (mission: string) =>
      message([
        {
          content: { $case: 'data', value: { mission } },
          metadata: undefined,
          filename: '',
          mediaType: 'application/json',
        },
      ]);
    const first = fire('a2a nightly');
    const waiting = await alice.sendMessage(request(first));
    if (!('status' in waiting)) throw new Error('expected a task');
    expect(waiting.id).toMatch(/^mission-[0-9a-f-]{36}\./);
    expect(waiting.contextId).toBe(waiting.id.split('.')[0]);
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [interrupt] = interruptsOf(waiting);
    expect(interrupt).toMatchObject({ reason: 'tool_approval' });
    // Sent again (a caller that got no answer): the same task, not a second run.
    const again = await alice.sendMessage(request(first));
    expect('status' in again && again.id).toBe(waiting.id);
    const missionId = waiting.contextId.slice('mission-'.length);
    const runs = async () =>
      (
        (await env.client.workflow.getHandle(`mission:${missionId}`).query('mission')) as {
          runs: { n: number; fireId?: string }[];
        }
      ).runs;
    expect(await runs()).toHaveLength(1);

    // Nobody else reads or decides it.
    const bob = await clientFor('bob');
    expect((await refusal(bob.getTask({ tenant: '', id: waiting.id, historyLength: 0 }))).name).toBe(
      'TaskNotFoundError',
    );
    expect((await refusal(approve(bob, waiting, interrupt!.id))).name).toBe('TaskNotFoundError');

    const done = await approve(alice, waiting, interrupt!.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(done)).toContain('nightly-report');
    const listed = await alice.listTasks({
      tenant: '',
      contextId: waiting.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: undefined,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(listed.tasks.map((t) => [t.id, t.status?.state])).toEqual([
      [waiting.id, TaskState.TASK_STATE_COMPLETED],
    ]);

    // Bob fires the shared mission: its run acts as alice, so he sees it go on, not her gate.
    const bobs = await bob.sendMessage({
      ...request(fire('a2a nightly')),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        historyLength: undefined,
        returnImmediately: true,
      },
    });
    if (!('status' in bobs)) throw new Error('expected a task');
    const going = await until(
      "bob's run going",
      async () => {
        const t = await bob.getTask({ tenant: '', id: bobs.id, historyLength: 0 });
        return t.status?.state === TaskState.TASK_STATE_WORKING ? t : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(going.status?.message?.parts[0]?.content).toMatchObject({
      $case: 'text',
      value: expect.stringContaining('acts as @alice'),
    });
    expect(interruptsOf(going)).toEqual([]);
    expect((await refusal(approve(bob, bobs, interrupt!.id))).code).toBe('interrupt_unknown');
    expect((await refusal(bob.cancelTask({ tenant: '', id: bobs.id, metadata: undefined }))).name).toBe(
      'TaskNotCancelableError',
    );
    // A fire the mission refuses is told why; a mission nobody has is not found.
    expect(await refusal(alice.sendMessage(request(fire('a2a nightly'))))).toMatchObject({
      code: 'mission_refused',
      message: expect.stringMatching(/waits|running|paused/),
    });
    expect((await refusal(alice.sendMessage(request(fire('no such mission'))))).code).toBe('mission_refused');
    expect(await runs()).toHaveLength(2);
  });
});

/**
 * A2A push notifications, driven by the protocol's own client (`@a2a-js/sdk`): a push config sent with a message
 * has the conversation post the task to a receiver (a local HTTP server speaking the receiving side of A2A) when it
 * waits on an approval, again after the worker was SIGKILLed and the approval given in the web app, and once more when
 * it completes; a receiver that answers 503 is asked again; the token reaches the receiver and never the workflow's
 * history; configs are read back without their secrets and only by the person who set them; addresses that are not
 * public, plain http and user info in the URL are refused with the reason.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamResponse, TaskState, type Task } from '@a2a-js/sdk';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sessionWorkdir } from '../../activities/tools/shell';
import { freePort } from '../helpers/processes';
import { historyText } from '../helpers/history';
import { a2aClientFor, a2aMessage, refusal, textPart } from '../helpers/a2a-client';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;
let receiver: Server;
let receiverPort = 0;
/** Every push received: its headers and the task it carried; `failNext` answers that many with 503 first. */
const received: { headers: IncomingHttpHeaders; task: Task; path: string }[] = [];
let failNext = 0;
let refusedOnce = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (failNext > 0) {
        failNext--;
        refusedOnce++;
        res.writeHead(503).end();
        return;
      }
      // The receiving side of A2A 1.0: a StreamResponse as JSON.
      const parsed = StreamResponse.fromJSON(JSON.parse(body));
      if (parsed.payload?.$case === 'task')
        received.push({ headers: req.headers, task: parsed.payload.value, path: req.url ?? '' });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    port: await freePort(),
    env: { A2A_PUSH_ALLOW_HOSTS: `127.0.0.1:${receiverPort}` },
  });
});

afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
  receiver?.close();
});

const clientFor = (user = 'alice') => a2aClientFor(stack, user);
const message = (text: string) => a2aMessage([textPart(text)]);
const push = (
  url: string,
  more: { token?: string; authentication?: { scheme: string; credentials: string } },
) => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: more.token ?? '',
  authentication: more.authentication,
});

const linesIn = (contextId: string, file: string) => {
  const full = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${contextId}`), file);
  return existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length : 0;
};

const pushesOf = (taskId: string) => received.filter((r) => r.task.id === taskId);

describe('A2A push notifications', () => {
  it('pushes a task waiting on an approval, and its end after a worker SIGKILL and a decision in the web app', async () => {
    const client = await clientFor();
    expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
    const token = `push-token-${randomUUID()}`;
    failNext = 1; // the first push meets a receiver that is down for a moment
    const waiting = await client.sendMessage({
      tenant: '',
      message: message('run `echo pushed >> push.txt`'),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: push(`http://127.0.0.1:${receiverPort}/a2a/hook?for=alice`, { token }),
        historyLength: undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    });
    if (!('status' in waiting)) throw new Error('expected a task');
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    await until(
      'the input-required push',
      () => pushesOf(waiting.id).some((p) => p.task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED),
      { timeoutMs: 60_000 },
    );
    expect(refusedOnce).toBe(1);
    const first = pushesOf(waiting.id).find(
      (p) => p.task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
    )!;
    expect(first.headers['x-a2a-notification-token']).toBe(token);
    expect(first.path).toBe('/a2a/hook?for=alice');
    const data = first.task.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content;
    const interrupts =
      data?.$case === 'data' ? (data.value as { interrupts: { id: string }[] }).interrupts : [];
    expect(interrupts).toHaveLength(1);

    // The worker dies; the approval is given in the web app; the conversation still pushes the end.
    await stack.restartWorker();
    expect((await stack.web.decide(waiting.contextId, interrupts[0]!.id, 'approve')).status).toBe(202);
    await until(
      'the completed push',
      () => pushesOf(waiting.id).some((p) => p.task.status?.state === TaskState.TASK_STATE_COMPLETED),
      { timeoutMs: 90_000 },
    );
    expect(linesIn(waiting.contextId, 'push.txt')).toBe(1);
    const states = pushesOf(waiting.id).map((p) => p.task.status?.state);
    // Each state told once (the 503 was asked again, not told twice once it answered).
    expect(states.filter((s) => s === TaskState.TASK_STATE_INPUT_REQUIRED)).toHaveLength(1);
    expect(states.filter((s) => s === TaskState.TASK_STATE_COMPLETED)).toHaveLength(1);

    // The token is in no workflow history; the task's configs are gone once its end was pushed.
    const history = historyText(
      await env.client.workflow.getHandle(`session:web:${waiting.contextId}`).fetchHistory(),
    );
    expect(history).not.toContain(token);
    expect(history).toContain(waiting.id);
    const left = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: waiting.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(left.configs).toEqual([]);
  });

  it('keeps configs per person, never reads their secrets back, and refuses addresses a push may not reach', async () => {
    const alice = await clientFor();
    const waiting = await alice.sendMessage({
      tenant: '',
      message: message('run `echo later >> later.txt`'),
      configuration: undefined,
      metadata: undefined,
    });
    if (!('status' in waiting)) throw new Error('expected a task');
    const credentials = `secret-${randomUUID()}`;
    const made = await alice.createTaskPushNotificationConfig({
      ...push(`http://127.0.0.1:${receiverPort}/second`, {
        authentication: { scheme: 'Bearer', credentials },
      }),
      taskId: waiting.id,
      id: 'second',
    });
    expect(made).toMatchObject({ id: 'second', taskId: waiting.id, token: '' });
    expect(made.authentication).toEqual({ scheme: 'Bearer', credentials: '' });
    await until('the push to the new config', () => received.some((r) => r.path === '/second'), {
      timeoutMs: 60_000,
    });
    expect(received.find((r) => r.path === '/second')!.headers.authorization).toBe(`Bearer ${credentials}`);
    const listed = await alice.listTaskPushNotificationConfig({
      tenant: '',
      taskId: waiting.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(listed.configs.map((c) => [c.id, c.url, c.authentication?.credentials])).toEqual([
      ['second', `http://127.0.0.1:${receiverPort}/second`, ''],
    ]);

    // Someone else neither reads nor removes it, nor sets one on that task.
    const bob = await clientFor('bob');
    expect(
      (await refusal(bob.getTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'second' })))
        .name,
    ).toBe('TaskNotFoundError');
    expect(
      (await refusal(bob.deleteTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'second' })))
        .name,
    ).toBe('TaskNotFoundError');
    expect(
      (
        await refusal(
          bob.createTaskPushNotificationConfig({
            ...push(`http://127.0.0.1:${receiverPort}/bob`, {}),
            taskId: waiting.id,
          }),
        )
      ).name,
    ).toBe('TaskNotFoundError');

    const refusedUrl = async (url: string) =>
      await refusal(alice.createTaskPushNotificationConfig({ ...push(url, {}), taskId: waiting.id }));
    expect(await refusedUrl('http://169.254.169.254/latest/meta-data')).toMatchObject({
      code: 'push_url_refused',
    });
    expect((await refusedUrl('https://127.0.0.1:9/hook')).message).toMatch(/A2A_PUSH_ALLOW_HOSTS/);
    expect((await refusedUrl('http://example.com/hook')).message).toMatch(/plain http is refused/);
    expect((await refusedUrl(`http://user:pw@127.0.0.1:${receiverPort}/`)).message).toMatch(
      /no user or password/,
    );
    expect((await refusedUrl('not a url')).code).toBe('push_url_refused');

    await alice.deleteTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'second' });
    expect(
      (await refusal(alice.getTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'second' })))
        .name,
    ).toBe('TaskNotFoundError');
  });
});

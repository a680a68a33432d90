/**
 * The AG-UI endpoint is a way in for people, not around the rules: each attack below is tried against a real gateway,
 * worker and Temporal server, and "lost" means it got through (someone read, wrote or decided what is not theirs,
 * a command ran other than shown or twice, or input that must be refused was taken).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { SessionView } from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { aguiInput, aguiSay, postAgui } from '../helpers/agui';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

const FRONT_END = 'https://front-end.test';
let env: TestWorkflowEnvironment;
let stack: Stack;
const tally = new Tally();

beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({ temporalAddress: env.address, env: { AGUI_ALLOWED_ORIGINS: FRONT_END } });
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('ag-ui: nobody reads, writes or decides what is not theirs');
  } finally {
    await stack?.stop();
    await env?.teardown();
  }
});

const url = () => `http://127.0.0.1:${stack.port}/api/agui`;
const thread = () => `agui-sec-${randomBytes(5).toString('hex')}`;

const post = async (body: unknown, user: string, headers: Record<string, string> = {}) =>
  await postAgui(url(), body, { ...stack.web.headers(user), ...headers });
const input = aguiInput;
const say = aguiSay;

const view = async (threadId: string, user = 'alice') =>
  (await stack.web.request('GET', `/sessions/${threadId}`, undefined, user)).body as SessionView;
const lines = (threadId: string, file: string) => {
  const full = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${threadId}`), file);
  return existsSync(full) ? readFileSync(full, 'utf8') : '';
};

/** Alice's thread waiting at an approval of `command`; returns the interrupt's id. */
async function waitingThread(threadId: string, command: string, user = 'alice'): Promise<string> {
  const run = await post(say(threadId, `run \`${command}\``), user);
  const finished = run.events.find((e) => e.type === 'RUN_FINISHED');
  const id = finished?.outcome?.interrupts?.[0]?.id;
  if (!id) throw new Error(`no interrupt: ${JSON.stringify(run.events).slice(0, 500)}`);
  return id;
}

describe('AG-UI boundary', () => {
  it('keeps other people out of a thread', async () => {
    const threadId = thread();
    const gateId = await waitingThread(threadId, 'echo mine >> a.txt');
    const before = (await view(threadId)).transcript.length;
    // Reading it, deciding its gate, writing into it: 404 as for a thread that does not exist, and nothing changes.
    const read = await post(input(threadId), 'mallory');
    tally.attempt(
      read.status === 404 && read.events.length === 0,
      () => `mallory read alice's thread: ${read.status}`,
    );
    const decide = await post(
      input(threadId, {
        resume: [{ interruptId: gateId, status: 'resolved', payload: { choice: 'approve' } }],
      }),
      'mallory',
    );
    tally.attempt(decide.status === 404, () => `mallory's resume answered ${decide.status}`);
    const write = await post(say(threadId, 'hello from mallory'), 'mallory');
    tally.attempt(write.status === 404, () => `mallory's message answered ${write.status}`);
    const after = await view(threadId);
    tally.attempt(
      after.transcript.length === before &&
        after.gates[0]?.status === 'pending' &&
        lines(threadId, 'a.txt') === '',
      () => `alice's thread changed: ${JSON.stringify(after.gates[0]?.resolution)}`,
    );
    // A gate of Bob's named in Alice's own thread: not hers to find there.
    const bobs = thread();
    const bobGate = await waitingThread(bobs, 'echo bob >> b.txt', 'bob');
    const crossed = await post(
      input(threadId, {
        resume: [
          { interruptId: gateId, status: 'cancelled' },
          { interruptId: bobGate, status: 'resolved', payload: { choice: 'approve' } },
        ],
      }),
      'alice',
    );
    tally.attempt(
      crossed.events.some((e) => e.type === 'RUN_ERROR' && e.code === 'interrupt_unknown') &&
        (await view(bobs, 'bob')).gates[0]?.status === 'pending',
      () => `a gate of another thread was decided: ${JSON.stringify(crossed.events).slice(0, 300)}`,
    );
    expect(tally.lost).toBe(0);
  });

  it('runs exactly what was shown, once, however the resume is dressed', async () => {
    const threadId = thread();
    const gateId = await waitingThread(threadId, 'echo shown >> c.txt');
    // History stuffing: an edit far larger than any tool takes, and a resume of a thousand entries, refused here.
    const stuffed = await post(
      input(threadId, {
        resume: [
          {
            interruptId: gateId,
            status: 'resolved',
            payload: { choice: 'edit', args: { command: `echo ${'x'.repeat(1_000_000)}` } },
          },
        ],
      }),
      'alice',
    );
    tally.attempt(
      stuffed.events.some((e) => e.type === 'RUN_ERROR' && e.code === 'interrupt_payload_invalid'),
      () => `a 1 MB edit answered: ${JSON.stringify(stuffed.events).slice(0, 200)}`,
    );
    const many = await post(
      input(threadId, {
        resume: Array.from({ length: 1_000 }, (_, i) => ({
          interruptId: `${gateId}-${i}`,
          status: 'cancelled',
        })),
      }),
      'alice',
    );
    tally.attempt(
      many.events.some((e) => e.type === 'RUN_ERROR' && e.code === 'interrupt_payload_invalid'),
      () => `a resume of 1,000 entries answered: ${JSON.stringify(many.events).slice(0, 200)}`,
    );
    // "approve" with other arguments smuggled in: the arguments shown run, not these.
    const smuggled = await post(
      input(threadId, {
        resume: [
          {
            interruptId: gateId,
            status: 'resolved',
            payload: { choice: 'approve', args: { command: 'echo smuggled >> c.txt' } },
          },
        ],
      }),
      'alice',
    );
    tally.attempt(
      smuggled.events.some((e) => e.type === 'RUN_FINISHED') && lines(threadId, 'c.txt') === 'shown\n',
      () => `ran: ${JSON.stringify(lines(threadId, 'c.txt'))}`,
    );
    // The same resume again (a replay): already decided, and nothing runs twice.
    const replay = await post(
      input(threadId, {
        resume: [{ interruptId: gateId, status: 'resolved', payload: { choice: 'approve' } }],
      }),
      'alice',
    );
    tally.attempt(
      replay.events.some((e) => e.type === 'RUN_ERROR' && e.code === 'interrupt_already_decided') &&
        lines(threadId, 'c.txt') === 'shown\n',
      () =>
        `replay: ${JSON.stringify(replay.events).slice(0, 300)}; ran ${JSON.stringify(lines(threadId, 'c.txt'))}`,
    );
    expect(tally.lost).toBe(0);
  });

  it('refuses foreign origins, forms, oversized and malformed input before anything is sent', async () => {
    const threadId = thread();
    const foreign = await post(say(threadId, 'from a foreign page'), 'alice', {
      origin: 'https://evil.test',
    });
    tally.attempt(foreign.status === 403, () => `a foreign origin's run answered ${foreign.status}`);
    const preflight = await fetch(url(), {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST' },
    });
    tally.attempt(
      preflight.status === 403 && preflight.headers.get('access-control-allow-origin') === null,
      () => `a foreign preflight answered ${preflight.status}`,
    );
    // A form post (what a cross-site page can send without asking): not JSON, refused.
    const form = await fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...stack.web.headers('alice') },
      body: JSON.stringify(say(threadId, 'from a form')),
    });
    tally.attempt(form.status === 415, () => `a text/plain post answered ${form.status}`);
    const huge = await post(
      { ...say(threadId, 'x'), context: [{ description: 'd', value: 'y'.repeat(3 * 1024 * 1024) }] },
      'alice',
    );
    tally.attempt(huge.status === 413, () => `a 3 MB body answered ${huge.status}`);
    const traversal = await post(say('../../etc', 'hi'), 'alice');
    tally.attempt(traversal.status === 400, () => `a thread id "../../etc" answered ${traversal.status}`);
    const image = await post(
      input(threadId, {
        messages: [
          {
            id: randomUUID(),
            role: 'user',
            content: [{ type: 'image', source: { type: 'url', value: 'http://169.254.169.254/' } }],
          },
        ],
      }),
      'alice',
    );
    tally.attempt(image.status === 400, () => `an image message answered ${image.status}`);
    const tooLong = await post(say(threadId, 'z'.repeat(20_001)), 'alice');
    tally.attempt(tooLong.status === 400, () => `a 20,001-character message answered ${tooLong.status}`);
    const notJson = await post('{"threadId":', 'alice');
    tally.attempt(notJson.status === 400, () => `broken JSON answered ${notJson.status}`);
    // None of it started a conversation.
    const absent = await stack.web.request('GET', `/sessions/${threadId}`);
    tally.attempt(absent.status === 404, () => `a refused run started the conversation: ${absent.status}`);
    expect(tally.lost).toBe(0);
  });
});

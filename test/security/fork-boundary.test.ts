/**
 * Forks are a way to go another way, not around the rules: each attack below is tried against a real gateway, worker
 * and Temporal server (the scripted model), through the web API and AG-UI as any caller can send it. "Lost" means
 * it got through: someone read or copied a conversation that is not theirs, made a fork act on someone else's words
 * or approvals, squatted or overwrote a conversation, ran a recorded tool again, learned of someone else's fork, or
 * bad input was taken.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { SessionView } from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { aguiInput, postAgui } from '../helpers/agui';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let stack: Stack;
const tally = new Tally();

beforeAll(async () => {
  env = await startTestTemporal();
  // olivia approves (she may read everyone's conversations); mallory is nobody here.
  stack = await startStack({ temporalAddress: env.address, policy: { approvers: ['olivia'] } });
});

afterAll(async () => {
  try {
    if (tally.runs)
      tally.finish('fork: nobody copies, steers or squats what is not theirs, and nothing runs again');
  } finally {
    await stack?.stop();
    await env?.teardown();
  }
});

const view = async (sessionId: string, user = 'alice') =>
  (await stack.web.request('GET', `/sessions/${sessionId}`, undefined, user)).body as SessionView;
const runs = (sessionId: string) => {
  const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${sessionId}`), 'runs.txt');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
};
const fork = (sessionId: string, body: unknown, user: string) =>
  stack.web.request('POST', `/sessions/${sessionId}/fork`, body, user);
const agui = (threadId: string, forkProps: unknown, user: string, extra: Record<string, unknown> = {}) =>
  postAgui(
    `http://127.0.0.1:${stack.port}/api/agui`,
    aguiInput(threadId, { forwardedProps: { fork: forkProps }, ...extra }),
    stack.web.headers(user),
  );

/** alice's conversation: a command approved and run once, answered, and a second one waiting for her approval. */
async function alicesConversation() {
  const sessionId = `fork-sec-${randomBytes(5).toString('hex')}`;
  await stack.web.say(sessionId, 'run `echo once >> runs.txt`');
  const gate = await stack.web.pendingGate(sessionId);
  await stack.web.decide(sessionId, gate.id, 'always', { scope: 'session' });
  const done = await stack.web.answered(sessionId);
  const answer = done.transcript.findLast((m) => m.role === 'assistant')!;
  const first = done.transcript[0]!;
  return { sessionId, answerId: answer.id, firstId: first.id };
}

describe('fork boundary', () => {
  it('keeps strangers out and refuses every crafted fork, telling nothing', async () => {
    const alice = await alicesConversation();
    const attempts: [string, () => Promise<boolean>][] = [
      [
        'a stranger forks it',
        async () => (await fork(alice.sessionId, { messageId: alice.answerId }, 'mallory')).status === 404,
      ],
      [
        'a stranger lists its forks',
        async () =>
          (await stack.web.request('GET', `/sessions/${alice.sessionId}/forks`, undefined, 'mallory'))
            .status === 404,
      ],
      [
        'a stranger forks it over AG-UI',
        async () =>
          (
            await agui(
              `m-${randomUUID()}`,
              { threadId: alice.sessionId, messageId: alice.answerId },
              'mallory',
            )
          ).status === 404,
      ],
      [
        "a stranger forks into alice's thread id",
        async () =>
          (await agui(alice.sessionId, { threadId: alice.sessionId, messageId: alice.answerId }, 'mallory'))
            .status === 404,
      ],
      [
        'alice forks over her own conversation (AG-UI thread taken)',
        async () =>
          (await agui(alice.sessionId, { threadId: alice.sessionId, messageId: alice.answerId }, 'alice'))
            .status === 409,
      ],
      [
        "an approver retries alice's answer (her words, his sign-ins)",
        async () =>
          (await fork(alice.sessionId, { messageId: alice.answerId, mode: 'retry' }, 'olivia')).status ===
          400,
      ],
      [
        'a retry of a step that called tools',
        async () => {
          const step = (await view(alice.sessionId)).transcript.find(
            (m) => m.role === 'assistant' && m.toolCalls.length,
          )!;
          return (await fork(alice.sessionId, { messageId: step.id, mode: 'retry' }, 'alice')).status === 400;
        },
      ],
      [
        'a model the deployment does not have',
        async () =>
          (
            await fork(
              alice.sessionId,
              { messageId: alice.answerId, mode: 'retry', model: 'openai:gpt-4o' },
              'alice',
            )
          ).status === 400,
      ],
      [
        'a message id of another conversation',
        async () => {
          const other = await alicesConversation();
          return (await fork(alice.sessionId, { messageId: other.answerId }, 'alice')).status === 400;
        },
      ],
      [
        'a query string in the message id',
        async () =>
          (await fork(alice.sessionId, { messageId: "x' OR AgentOwner = 'alice" }, 'alice')).status === 400,
      ],
      [
        'an unknown field',
        async () =>
          (await fork(alice.sessionId, { messageId: alice.answerId, owner: 'mallory' }, 'alice')).status ===
          400,
      ],
      ['a fork without JSON', async () => (await fork(alice.sessionId, 'fork it', 'alice')).status === 400],
      [
        'an AG-UI fork with a bad shape',
        async () =>
          (await agui(`a-${randomUUID()}`, { threadId: '../../etc', messageId: 1 }, 'alice')).status === 400,
      ],
      [
        'an AG-UI retry that also sends a message',
        async () =>
          (
            await agui(
              `a-${randomUUID()}`,
              { threadId: alice.sessionId, messageId: alice.answerId, mode: 'retry' },
              'alice',
              { messages: [{ id: randomUUID(), role: 'user', content: 'and this' }] },
            )
          ).status === 400,
      ],
      [
        'an AG-UI message reusing an id the fork holds',
        async () =>
          (
            await agui(
              `a-${randomUUID()}`,
              { threadId: alice.sessionId, messageId: alice.answerId },
              'alice',
              { messages: [{ id: alice.firstId, role: 'user', content: 'edited' }] },
            )
          ).status === 400,
      ],
    ];
    for (const [what, attack] of attempts) tally.attempt(await attack(), () => what);
  });

  it("gives a fork nothing of the original's approvals or runs, and tells no one else of it", async () => {
    const alice = await alicesConversation();
    // olivia (who may read) forks through alice's answer: alice's "always" grant there is not olivia's.
    const made = await fork(alice.sessionId, { messageId: alice.answerId }, 'olivia');
    tally.check(made.status === 201, () => `olivia's fork was made: ${made.status}`);
    const forkId = made.body.sessionId as string;
    const forked = await stack.web.waitFor(forkId, (v) => v.status === 'idle', 'the fork', 30_000, 'olivia');
    tally.attempt(forked.grants.length === 0, () => 'the fork inherited the conversation grant');
    tally.attempt(runs(forkId) === 0, () => 'the recorded command ran again in the fork');
    await stack.web.say(forkId, 'run `echo once >> runs.txt`', 'olivia');
    const gate = await stack.web.pendingGate(forkId, 'olivia');
    tally.attempt(
      gate.kind === 'approval' && gate.requesterId === 'olivia',
      () => `the same command ran in the fork on alice's standing approval: ${JSON.stringify(gate)}`,
    );
    tally.attempt(runs(forkId) === 0, () => 'the command ran before olivia approved it');
    // alice's approval here is not olivia's: alice may not decide in olivia's fork.
    const alicesClick = await stack.web.decide(forkId, gate.id, 'approve', {}, 'alice');
    tally.attempt(alicesClick.status === 404, () => `alice decided in olivia's fork: ${alicesClick.status}`);
    tally.attempt(
      ((await view(forkId, 'alice')) as unknown as { error?: string }).error !== undefined,
      () => "alice read olivia's fork",
    );
    // alice, a plain owner, is not told of olivia's fork; olivia, an approver, sees it.
    const alicesList = (await stack.web.request('GET', `/sessions/${alice.sessionId}/forks`)).body
      .forks as unknown[];
    tally.attempt(
      alicesList.length === 0,
      () => `alice learned of olivia's fork: ${JSON.stringify(alicesList)}`,
    );
    // The original is untouched: the same one command ran there, its transcript unchanged.
    tally.attempt(runs(alice.sessionId) === 1, () => `the original ran again: ${runs(alice.sessionId)}`);
    // A fork through alice's own message by olivia waits for olivia's words instead of answering alice's as olivia.
    const through = await fork(alice.sessionId, { messageId: alice.firstId }, 'olivia');
    const waiting = await stack.web.waitFor(
      through.body.sessionId as string,
      (v) => v.status === 'idle',
      'the fork through a message',
      30_000,
      'olivia',
    );
    tally.attempt(
      waiting.transcript.length === 1 && waiting.gates.length === 0,
      () => `alice's words were acted on as olivia: ${JSON.stringify(waiting.transcript.slice(1))}`,
    );
  });
});

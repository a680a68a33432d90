/**
 * Stop (#22): the Stop signal and `stop` typed in the conversation end the running turn, durably: the model call
 * is abandoned (the model server sees the request go away), a running tool is cancelled and its process killed,
 * the turn's open gates close as stopped, queued messages stay queued and run next. Only the requester or an
 * approver may stop; a Stop sent while no worker runs takes effect when one starts.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { stopSignal } from '../../workflows/session/contract';
import { testConfig } from '../helpers/config';
import { FakeOpenAi } from '../helpers/fake-openai';
import { lastAnswer, TestSession, toolResults } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { createTestWorker, withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const STOPPED_BY = (who: string) => `⏹️ Stopped by @${who}.`;

describe('Stop', () => {
  it('abandons a model call in flight, keeps the queued message, and answers it next', async () => {
    const model = await new FakeOpenAi((request) => {
      const last = request.messages.at(-1)!;
      return last.content === 'think forever'
        ? { hang: true }
        : { text: `answer to ${String(last.content)}` };
    }).start();
    const config = testConfig(
      {},
      { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'k' },
    );
    const { worker, taskQueue } = await createTestWorker(env, config);
    try {
      await worker.runUntil(async () => {
        const session = new TestSession(env.client, taskQueue);
        await session.say('think forever');
        await session.waitFor((v) => v.status === 'running' && model.requests.length === 1, 'the model call');
        await session.say('queued meanwhile');
        await session.waitFor((v) => v.queued === 1, 'the second message to queue');

        await session.handle.signal(stopSignal, { userId: 'alice' });
        const view = await session.waitFor(
          (v) => v.status === 'idle' && lastAnswer(v) === 'answer to queued meanwhile',
          'the queued message to be answered after the stop',
        );
        expect(view.transcript.map((m) => (m.role === 'tool' ? 'tool' : `${m.role}:${m.text}`))).toEqual([
          'user:think forever',
          `assistant:${STOPPED_BY('alice')}`,
          'user:queued meanwhile',
          'assistant:answer to queued meanwhile',
        ]);
        // The activity saw the cancellation at its heartbeat and aborted its request.
        await until('the hanging model request to be abandoned', () => model.closedUnanswered.includes(0), {
          timeoutMs: 30_000,
        });
      });
    } finally {
      await model.stop();
    }
  });

  it('cancels a running tool through its heartbeat and kills its process, when `stop` is typed', async () => {
    await withWorker(env, async (taskQueue, config) => {
      const session = new TestSession(env.client, taskQueue);
      const proof = path.join(sessionWorkdir(config.dataDir, session.workflowId), 'finished.txt');
      await session.say('run `sleep 6 && echo done > finished.txt`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      await session.waitFor(
        (v) => v.gates[0]?.status === 'resolved' && v.status === 'running',
        'the tool to run',
      );

      await session.say('stop');
      const view = await session.waitFor((v) => v.status === 'idle', 'the turn to stop');
      expect(toolResults(view)).toEqual([
        expect.objectContaining({
          status: 'cancelled',
          content: expect.stringContaining('@alice stopped the turn'),
        }),
      ]);
      expect(lastAnswer(view)).toBe(STOPPED_BY('alice'));
      // `stop` was the command, not a message for the model.
      expect(view.transcript.filter((m) => m.role === 'user').map((m) => m.text)).toEqual([
        'run `sleep 6 && echo done > finished.txt`',
      ]);
      // Long after the command would have finished, it has not: its process was killed.
      await new Promise((resolve) => setTimeout(resolve, 9_000));
      expect(existsSync(proof)).toBe(false);
    });
  });

  it('closes the open gate as stopped, refuses anyone but the requester or an approver, and works while no worker runs', async () => {
    const config = testConfig({ approvers: ['carol'] });
    let session: TestSession;
    const first = await createTestWorker(env, config);
    await first.worker.runUntil(async () => {
      session = new TestSession(env.client, first.taskQueue);
      await session.say('run `echo hi`');
      await session.pendingGate();
      await session.handle.signal(stopSignal, { userId: 'bob' });
      await session.waitFor(
        (v) =>
          v.notices.some((n) => n.to === 'bob' && n.text.includes('Only @alice, who asked, or an approver')),
        'bob to be told he may not stop',
      );
      expect((await session.state()).gates[0]!.status).toBe('pending');
    });

    // No worker runs now: the Stop is a signal, kept by the server until a worker replays the session.
    await session!.handle.signal(stopSignal, { userId: 'carol' });
    const second = await createTestWorker(env, config, first.taskQueue);
    await second.worker.runUntil(async () => {
      const view = await session.waitFor((v) => v.status === 'idle', 'the stop to take effect');
      expect(view.gates[0]).toMatchObject({
        status: 'cancelled',
        resolution: { outcome: 'stopped', by: 'carol' },
      });
      expect(toolResults(view)).toEqual([
        expect.objectContaining({ status: 'cancelled', content: 'not run: @carol stopped the turn.' }),
      ]);
      expect(lastAnswer(view)).toBe(STOPPED_BY('carol'));

      // A Stop with nothing running is answered, and the conversation goes on as usual.
      await session.handle.signal(stopSignal, { userId: 'alice' });
      await session.waitFor(
        (v) => v.notices.some((n) => n.to === 'alice' && n.text.includes('Nothing is running')),
        'the idle stop to be answered',
      );
      await session.say('hello');
      expect(lastAnswer(await session.idle())).toContain('hello');
    });
  });
});

/**
 * The web chat's live view is pushed, not polled: each gateway keeps one `watchView` update waiting in the
 * session, shared by every tab that shows it, and reads the view only when the workflow says it changed. The
 * Temporal server's own request counter (its Prometheus metrics) shows what open tabs on an idle session cost.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { workflowCode } from '../../workers/workflow-code';
import { stateQuery } from '../../workflows/session/contract';
import { freePort } from '../helpers/processes';
import { SseTab } from '../helpers/sse';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;
let metricsUrl: string;

beforeAll(async () => {
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  env = await startTestTemporal({ metricsPort });
  stack = await startStack({ temporalAddress: env.address });
});

afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

/** Queries the server has answered so far (all workflows, all callers). */
async function queriesServed(): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  let total = 0;
  for (const line of text.split('\n'))
    if (/^service_requests\{.*operation="QueryWorkflow"/.test(line)) total += Number(line.split(' ').pop());
  return total;
}

const tabsOn = async (sessionId: string, count: number, user = 'alice') =>
  await Promise.all(
    Array.from({ length: count }, () =>
      new SseTab(`${stack.web.baseUrl}/api/sessions/${sessionId}/stream`, stack.web.headers(user)).open(),
    ),
  );

const shows = (tab: SseTab, text: string) =>
  tab.views().some((view) => view.transcript.some((m) => m.text?.includes(text)));

describe('live web view', () => {
  it('pushes every change to all open tabs, and open tabs on an idle session cost no queries', async () => {
    const sessionId = randomUUID();
    const tabs = await tabsOn(sessionId, 5);
    await until('every tab told the conversation has not started', () =>
      tabs.every((t) => t.events.some((e) => e.event === 'not-found')),
    );
    expect((await stack.web.say(sessionId, 'first words')).status).toBe(202);
    await until('every tab shows the answer', () => tabs.every((t) => shows(t, 'You said: "first words"')));

    // Idle, five tabs open: under polling (a query per tab every 400 ms) this would be about 40 queries.
    // The last change's reads settle, and so does the server's counter (its metrics are reported a moment late):
    // the quiet spell starts once the count held still for a second.
    let before = await queriesServed();
    for (let settled = false, tries = 0; !settled && tries < 10; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const now = await queriesServed();
      settled = now === before;
      before = now;
    }
    expect(before).toBeGreaterThan(0); // the counter does see the reads made for each change
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await queriesServed()) - before).toBe(0);

    // Still live after the quiet spell: a second message reaches every tab.
    await stack.web.say(sessionId, 'second words');
    await until('every tab shows the second answer', () =>
      tabs.every((t) => shows(t, 'You said: "second words"')),
    );
    await Promise.all(tabs.map((t) => t.close()));
  });

  it('keeps a tab live across a worker crash: the watch waits in the session and the next change arrives', async () => {
    const sessionId = randomUUID();
    await stack.web.say(sessionId, 'before the crash');
    const [tab] = await tabsOn(sessionId, 1);
    await until('the tab shows the first answer', () => shows(tab!, 'You said: "before the crash"'));
    await stack.restartWorker(); // SIGKILL, then a new worker process
    await stack.web.say(sessionId, 'after the crash');
    await until(
      'the tab shows the answer given by the new worker',
      () => shows(tab!, 'You said: "after the crash"'),
      {
        context: () => `tab events: ${tab!.events.map((e) => e.event).join(', ')}${stack.logTail()}`,
      },
    );
    await tab!.close();
  });

  it('replays sessions whose view was read while they worked, so a restarted worker can take them over', async () => {
    // A tab reads the view (a query) at any moment of a turn. Read as often as possible during each turn here:
    // a read that lands inside a workflow task must not change what history records (with settings read by a
    // local activity, about one session in twenty then failed to replay: stuck after a worker restart).
    const unreplayable: string[] = [];
    for (let i = 0; i < 40; i++) {
      const sessionId = randomUUID();
      const handle = env.client.workflow.getHandle(`session:web:${sessionId}`);
      await stack.web.say(sessionId, `read while working ${i}`);
      const deadline = Date.now() + 30_000;
      let answered = false;
      while (!answered && Date.now() < deadline) {
        const view = await handle.query(stateQuery).catch(() => undefined);
        answered = !!view?.transcript.some((m) => m.role === 'assistant' && m.text.includes('You said'));
      }
      expect(answered).toBe(true);
      const history = await handle.fetchHistory();
      await Worker.runReplayHistory(workflowCode(inject('workflowBundlePath')), history, sessionId).catch(
        (error: Error) => unreplayable.push(`${sessionId}: ${error.message.slice(0, 300)}`),
      );
    }
    expect(unreplayable).toEqual([]);
  });

  it('never streams a view to someone who may not see the session', async () => {
    const sessionId = randomUUID();
    await stack.web.say(sessionId, 'for alice only');
    const [mine] = await tabsOn(sessionId, 1);
    const [theirs] = await tabsOn(sessionId, 1, 'mallory');
    await until('alice sees her answer', () => shows(mine!, 'You said: "for alice only"'));
    await stack.web.say(sessionId, 'still private');
    await until('alice sees the second answer', () => shows(mine!, 'You said: "still private"'));
    expect(theirs!.views()).toEqual([]);
    expect(theirs!.events.map((e) => e.event)).toContain('not-found');
    await Promise.all([mine!.close(), theirs!.close()]);
  });
});

/**
 * "Needs you" at an organization's size, with real processes: 300 people each leave one approval pending (more than
 * the 200 conversations the inbox once read for everyone), and each person's inbox lists exactly their own, with an
 * exact count; an approver of every call pages through all 300, each gate once although the policy names them under
 * two ids; and all of it is listed with no worker running, so listing asks no worker anything.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxList } from '../../gateways/web/inbox';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

const PEOPLE = Array.from({ length: 300 }, (_, i) => `p${String(i).padStart(3, '0')}`);
/** The approver of every call, named in the policy by their web id and their Slack id. */
const BOSS = 'boss';
const BOSS_SLACK = 'UBOSS0001';

let env: TestWorkflowEnvironment;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    policy: { approvers: [BOSS, BOSS_SLACK], users: { [BOSS]: { slack: [BOSS_SLACK] } } },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

async function inbox(user: string, cursor?: string): Promise<InboxList> {
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : '';
  const response = await stack.web.request('GET', `/inbox${query}`, undefined, user);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as InboxList;
}

/** Runs `each` over `all`, `width` at a time. */
async function inBatches<T>(all: T[], width: number, each: (one: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < all.length; i += width) await Promise.all(all.slice(i, i + width).map(each));
}

describe('"Needs you" for 300 people', () => {
  it('lists each person exactly their own decision, and pages an approver through all of them once', async () => {
    await inBatches(PEOPLE, 20, async (person) => {
      expect((await stack.web.say(`scale-${person}`, `run \`echo ${person}\``, person)).status).toBe(202);
    });
    await until(
      'all 300 conversations waiting on a decision in visibility',
      async () =>
        (await env.client.workflow.count(`ExecutionStatus = 'Running' AND AgentDeciders IN ('${BOSS}')`))
          .count === PEOPLE.length,
      { timeoutMs: 600_000 },
    );

    // With no worker running: whatever the inbox shows, it did not ask a worker for it.
    await stack.worker.kill('SIGKILL');

    await inBatches(PEOPLE, 20, async (person) => {
      const mine = await inbox(person);
      expect(mine.items.map((item) => item.workflowId)).toEqual([`session:web:scale-${person}`]);
      expect(mine.items[0]).toMatchObject({ kind: 'approval', decideAs: person, mayApprove: true });
      expect(mine.items[0]!.asks).toBe(`Run shell_execute: echo ${person}`);
      expect(mine).toMatchObject({ total: 1, notShown: 0, unreadable: 0 });
      expect(mine.next).toBeUndefined();
    });
    expect((await inbox('stranger')).items).toEqual([]);

    const pages: InboxList[] = [await inbox(BOSS)];
    while (pages.at(-1)!.next) pages.push(await inbox(BOSS, pages.at(-1)!.next));
    expect(pages[0]!.total).toBe(PEOPLE.length);
    expect(pages.length).toBeGreaterThan(1); // cut into pages, and each says where the next one is
    const seen = pages.flatMap((page) => page.items.map((item) => `${item.workflowId}#${item.gateId}`));
    expect(new Set(seen).size).toBe(seen.length); // each gate once, whichever of the boss's ids it names
    expect(seen).toHaveLength(PEOPLE.length);
    expect(pages.flatMap((page) => page.items).every((item) => item.decideAs === BOSS)).toBe(true);

    // The boss's cursor in a stranger's hands is refused: it is sealed to the person it was given to.
    const borrowed = await stack.web.request(
      'GET',
      `/inbox?cursor=${encodeURIComponent(pages[0]!.next!)}`,
      undefined,
      'stranger',
    );
    expect(borrowed.status).toBe(400);
    expect(JSON.stringify(borrowed.body)).not.toContain('session:');

    const refused = await stack.web.request('GET', '/inbox?cursor=not*a*cursor', undefined, BOSS);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('cursor');
  }, 900_000);
});

/**
 * Delegation and escalation are decisions like any other: durable, recorded on the gate, told in the conversation,
 * and counted by the workflow's own rules. Alice hands her approval to Dave from "Needs you"; Dave then sees it and
 * approves it, and it runs once. An approval nobody decides within the policy's `escalate.after` is put to Carol
 * too, who approves it from her inbox. Real worker, gateway and Temporal; the decisions go through the web API.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxItem } from '../../gateways/web/inbox';
import type { ApprovalGate } from '../../workflows/session/contract';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      approvers: ['bob'],
      // A POST that nobody decides within 2 s is put to Carol too (the default for every tool would be the same).
      tools: { http_request: { policy: 'ask', escalate: { after: '2s', to: ['carol'] } } },
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

const inbox = async (user: string) =>
  ((await stack.web.request('GET', '/inbox', undefined, user)).body as { items: InboxItem[] }).items;
const decide = (user: string, item: InboxItem, body: Record<string, unknown>) =>
  stack.web.request(
    'POST',
    '/inbox/decisions',
    { items: [{ workflowId: item.workflowId, gateId: item.gateId }], ...body },
    user,
  );

describe('delegation and escalation', () => {
  it('hands an approval to another person, who then decides it; recorded, told, and run once', async () => {
    await stack.web.say('handed', 'run `echo handed-over`');
    await stack.web.pendingGate('handed');
    const item = await until('the approval in Alice’s inbox', async () =>
      (await inbox('alice')).find((i) => i.sessionId === 'handed'),
    );
    expect(await inbox('dave')).toEqual([]);

    // Bad hand-overs are refused and change nothing.
    const nobody = await decide('alice', item, { choice: 'delegate' });
    expect(nobody.status).toBe(400);
    expect(nobody.body.error).toBe('to: name the person to hand them to');
    const already = await decide('alice', item, { choice: 'delegate', to: 'bob' });
    expect(already.body.outcomes[0]).toMatchObject({ ok: false, error: '@bob may already decide it' });
    const stranger = await decide('mallory', item, { choice: 'delegate', to: 'mallory2' });
    expect(stranger.body.outcomes[0]).toMatchObject({ ok: false, error: 'no longer waiting on you' });

    const handed = await decide('alice', item, { choice: 'delegate', to: 'dave' });
    expect(handed.body.outcomes[0]).toMatchObject({ ok: true });
    const theirs = await until('the approval in Dave’s inbox', async () =>
      (await inbox('dave')).find((i) => i.sessionId === 'handed'),
    );
    expect(theirs.rule).toBe('Needs approval from @bob, @dave.');
    const view = await stack.web.waitFor(
      'handed',
      (v) =>
        v.notices.some(
          (n) =>
            n.text ===
            '@alice handed this shell_execute call to @dave, who may decide it now in their place.',
        ),
      'the hand-over told',
    );
    expect((view.gates[0] as ApprovalGate).delegations).toMatchObject([{ by: 'alice', to: 'dave' }]);

    expect((await decide('dave', theirs, { choice: 'approve' })).body.outcomes[0]).toMatchObject({
      ok: true,
    });
    const done = await stack.web.answered('handed');
    expect(done.transcript.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect((done.gates[0] as ApprovalGate).resolution).toMatchObject({ outcome: 'approved', by: 'dave' });
  });

  it('puts an approval nobody decided in time to the escalation approvers, who decide it from their inbox', async () => {
    await stack.web.say('escalated', 'post https://example.invalid hello');
    await stack.web.pendingGate('escalated');
    expect((await inbox('carol')).some((i) => i.sessionId === 'escalated')).toBe(false);
    const item = await until(
      'the escalation to Carol',
      async () => (await inbox('carol')).find((i) => i.sessionId === 'escalated'),
      { timeoutMs: 30_000 },
    );
    expect(item.rule).toBe('Who may decide: @alice, @bob, @carol.');
    const view = await stack.web.waitFor(
      'escalated',
      (v) =>
        v.notices.some((n) =>
          /^Nobody decided this http_request call within \d+ min: @carol is asked too\.$/.test(n.text),
        ),
      'the escalation told',
    );
    expect((view.gates[0] as ApprovalGate).escalation).toMatchObject({ to: ['carol'], done: true });
    expect((await decide('carol', item, { choice: 'approve' })).body.outcomes[0]).toMatchObject({ ok: true });
    const done = await stack.web.answered('escalated');
    expect(done.transcript.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect((done.gates[0] as ApprovalGate).resolution).toMatchObject({ outcome: 'approved', by: 'carol' });
  });
});

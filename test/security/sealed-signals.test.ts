/**
 * Reaching Temporal is not the power to decide: every signal that acts in a person's name must carry the gateway's
 * seal (infra/gateway-seal.ts), checked by the worker. Each attack here is sent straight to a real Temporal server,
 * as anyone who reaches its frontend could (no gateway), against a real worker: unsigned, forged with another key,
 * altered, moved to another gate or conversation, replayed, expired. Every attempt is a scoreboard run, and "lost"
 * means it changed something.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { originMac, sealedCall, sealSignal } from '../../infra/gateway-seal';
import { sealingClient } from '../../infra/temporal/sealing-interceptor';
import {
  answerDraftSignal,
  answerSignal,
  decideSignal,
  revokeGrantSignal,
  userMessageSignal,
  type Decision,
  type SessionView,
} from '../../workflows/session/contract';
import type { AuditEntry } from '../../common/audit';
import { Tally } from '../chaos/summary';
import { TEST_GATEWAY_KEY } from '../helpers/config';
import { TestSession } from '../helpers/session';
import { until } from '../helpers/until';
import { userWorkflowId } from '../../common/ids';
import { credentialChangeSignal, grantsQuery, revokeUserGrantSignal } from '../../workflows/user/contract';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;
const tally = new Tally();

beforeAll(async () => {
  env = await startTestTemporal();
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('signals: only a gateway speaks for a person');
  } finally {
    await env?.teardown();
  }
});

/** Waits until `who` is told something matching `text`; returns the view then. */
async function toldTo(s: TestSession, who: string, text: RegExp, after = 0): Promise<SessionView> {
  return await s.waitFor(
    (v) => v.notices.some((n) => n.to === who && n.at >= after && text.test(n.text)),
    `a notice to ${who} matching ${text}`,
  );
}

const pending = (v: SessionView, gateId: string) =>
  v.gates.find((g) => g.id === gateId)?.status === 'pending';

describe('signals in a person’s name', () => {
  it('refuses decisions that no gateway sealed, and tells the person named', async () => {
    await withWorker(env, async (taskQueue) => {
      const s = new TestSession(env.client, taskQueue);
      await s.say('run `echo sealed-only`');
      const [gate] = await s.pendingGate();
      const direct = env.client.workflow.getHandle(s.workflowId);
      const approve: Decision = { gateId: gate!.id, choice: 'approve', userId: 'alice' };
      let since = (await s.state()).notices.at(-1)?.at ?? 0;

      // 1. Unsigned, naming the requester, as anyone who reaches Temporal's frontend could send it.
      await direct.signal(decideSignal, approve);
      let view = await toldTo(s, 'alice', /not signed by a gateway/, since);
      tally.attempt(pending(view, gate!.id), () => 'an unsigned approval decided the gate');

      // 2. Sealed with a key that is not the gateway's.
      since = view.notices.at(-1)!.at;
      await sealingClient(env.client, 'not-the-gateway-key-0123456789abcdefghijkl')
        .workflow.getHandle(s.workflowId)
        .signal(decideSignal, approve);
      view = await toldTo(s, 'alice', /does not match/, since);
      tally.attempt(pending(view, gate!.id), () => 'an approval sealed with another key decided the gate');

      // 3. A real seal of a denial, with the choice altered to approve.
      since = view.notices.at(-1)!.at;
      const deny: Decision = { gateId: gate!.id, choice: 'deny', userId: 'alice' };
      const denySeal = sealSignal(TEST_GATEWAY_KEY, sealedCall('decide', s.workflowId, deny));
      await direct.signal(decideSignal, approve, denySeal);
      view = await toldTo(s, 'alice', /does not match/, since);
      tally.attempt(pending(view, gate!.id), () => 'an altered choice kept its seal');

      // 4. A real seal for the same approval in another conversation, moved here.
      since = view.notices.at(-1)!.at;
      const elsewhere = sealSignal(
        TEST_GATEWAY_KEY,
        sealedCall('decide', `session:web:${randomUUID()}`, approve),
      );
      await direct.signal(decideSignal, approve, elsewhere);
      view = await toldTo(s, 'alice', /does not match/, since);
      tally.attempt(pending(view, gate!.id), () => "another conversation's seal decided the gate");

      // 5. A real seal for another gate of this conversation, moved to this one.
      since = view.notices.at(-1)!.at;
      const otherGate = sealSignal(
        TEST_GATEWAY_KEY,
        sealedCall('decide', s.workflowId, { ...approve, gateId: randomUUID() }),
      );
      await direct.signal(decideSignal, approve, otherGate);
      view = await toldTo(s, 'alice', /does not match/, since);
      tally.attempt(pending(view, gate!.id), () => "another gate's seal decided this one");

      // 6. A real seal made four days ago (kept from an old history, say).
      since = view.notices.at(-1)!.at;
      const old = sealSignal(
        TEST_GATEWAY_KEY,
        sealedCall('decide', s.workflowId, approve),
        Date.now() - 4 * 24 * 3_600_000,
      );
      await direct.signal(decideSignal, approve, old);
      view = await toldTo(s, 'alice', /older than three days/, since);
      tally.attempt(pending(view, gate!.id), () => 'an expired seal decided the gate');

      // 7. A seal that is not even shaped like one.
      since = view.notices.at(-1)!.at;
      await direct.signal(decideSignal, approve, { issuedAt: 'now', mac: 42 } as never);
      view = await toldTo(s, 'alice', /malformed/, since);
      tally.attempt(pending(view, gate!.id), () => 'a malformed seal decided the gate');

      // 8. Where it was made, told without a seal: believed with nothing, it changes nothing.
      since = view.notices.at(-1)!.at;
      await direct.signal(decideSignal, approve, undefined, { via: 'teams' });
      view = await toldTo(s, 'alice', /not signed by a gateway/, since);
      tally.attempt(pending(view, gate!.id), () => 'an unsigned approval with its place decided the gate');

      // The gateway's own sealed denial, raced by someone who took its seal (from a history) and claims another place
      // with a MAC of their own making: it decides (the decision is the person's), but the place is not believed.
      since = view.notices.at(-1)!.at;
      const realDeny = sealSignal(TEST_GATEWAY_KEY, sealedCall('decide', s.workflowId, deny));
      await direct.signal(decideSignal, deny, realDeny, { via: 'slack', mac: 'made-up-by-the-sender' });
      view = await s.waitFor((v) => !pending(v, gate!.id), 'the sealed denial to decide the gate');
      expect(view.gates[0]!.resolution).toMatchObject({ outcome: 'denied', by: 'alice' });
      tally.attempt(
        view.gates[0]!.resolution?.via === undefined,
        () => `a place with a forged MAC was believed: ${JSON.stringify(view.gates[0]!.resolution)}`,
      );
      // The gateway's own send, its place bound to the seal, comes second: refused as used, nothing changes.
      await direct.signal(decideSignal, deny, realDeny, {
        via: 'web',
        mac: originMac(TEST_GATEWAY_KEY, realDeny.mac, 'web'),
      });
      view = await toldTo(s, 'alice', /already used once/, since);
      tally.check(
        view.gates[0]!.resolution?.outcome === 'denied' && view.gates[0]!.resolution.via === undefined,
        () => `the replayed seal changed the outcome: ${JSON.stringify(view.gates[0]!.resolution)}`,
      );
      // A place whose MAC matches its seal is believed (the next conversation's denial, as a gateway sends it).
      const t = new TestSession(env.client, taskQueue);
      await t.say('run `echo placed`');
      const [placed] = await t.pendingGate();
      const denyThere: Decision = { gateId: placed!.id, choice: 'deny', userId: 'alice' };
      await sealingClient(env.client, TEST_GATEWAY_KEY)
        .workflow.getHandle(t.workflowId)
        .signal(decideSignal, denyThere, undefined, { via: 'email' });
      const there = await t.waitFor((v) => !pending(v, placed!.id), 'the denial there');
      expect(there.gates[0]!.resolution).toMatchObject({ outcome: 'denied', via: 'email' });
      // The key itself is never in the history: only MACs.
      const history = JSON.stringify(await s.handle.fetchHistory());
      tally.check(!history.includes(TEST_GATEWAY_KEY), () => 'the gateway key is in the history');
    });
  });

  it('refuses unsigned messages, typed approvals, answers and drafts', async () => {
    await withWorker(env, async (taskQueue) => {
      const s = new TestSession(env.client, taskQueue);
      await s.say('run `echo typed`');
      const [gate] = await s.pendingGate();
      const direct = env.client.workflow.getHandle(s.workflowId);
      let since = (await s.state()).notices.at(-1)?.at ?? 0;

      // A typed "approve" in the requester's name, unsigned.
      await direct.signal(userMessageSignal, { messageId: randomUUID(), userId: 'alice', text: 'approve' });
      let view = await toldTo(s, 'alice', /A message in your name was refused/, since);
      tally.attempt(pending(view, gate!.id), () => 'an unsigned typed approval decided the gate');
      await s.decide({ gateId: gate!.id, choice: 'deny' });
      await s.idle();

      // An unsigned message asking for a new turn: no turn runs, nothing is queued.
      since = (await s.state()).notices.at(-1)?.at ?? 0;
      const turnsBefore = (await s.state()).transcript.filter((m) => m.role === 'user').length;
      await direct.signal(userMessageSignal, { messageId: randomUUID(), userId: 'alice', text: 'run `id`' });
      view = await toldTo(s, 'alice', /A message in your name was refused/, since);
      tally.attempt(
        view.transcript.filter((m) => m.role === 'user').length === turnsBefore && view.queued === 0,
        () => 'an unsigned message started a turn',
      );

      // A question, answered unsigned (whole, and as a completing draft).
      await s.say('ask one');
      const question = await s.pendingQuestion();
      since = (await s.state()).notices.at(-1)?.at ?? 0;
      const answers = [{ question: 'Environment', selected: ['staging'] }];
      await direct.signal(answerSignal, { gateId: question.id, userId: 'alice', answers });
      view = await toldTo(s, 'alice', /An answer in your name was refused/, since);
      tally.attempt(pending(view, question.id), () => 'an unsigned answer answered the question');
      since = view.notices.at(-1)!.at;
      await direct.signal(answerDraftSignal, { gateId: question.id, userId: 'alice', answers, submit: true });
      view = await toldTo(s, 'alice', /An answer in your name was refused/, since);
      tally.attempt(pending(view, question.id), () => 'an unsigned draft answered the question');

      // The same answer from a gateway goes through.
      await s.answer(question.id, answers);
      view = await s.waitFor((v) => !pending(v, question.id), 'the sealed answer');
      expect(view.gates.find((g) => g.id === question.id)!.status).toBe('resolved');
    });
  });

  it('does not let two unsigned signals make a quorum of two under four-eyes', async () => {
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        await s.say('run `echo quorum`');
        const [gate] = await s.pendingGate();
        const direct = env.client.workflow.getHandle(s.workflowId);
        const since = (await s.state()).notices.at(-1)?.at ?? 0;
        await direct.signal(decideSignal, { gateId: gate!.id, choice: 'approve', userId: 'bob' });
        await direct.signal(decideSignal, { gateId: gate!.id, choice: 'approve', userId: 'carol' });
        await toldTo(s, 'bob', /not signed by a gateway/, since);
        const view = await toldTo(s, 'carol', /not signed by a gateway/, since);
        const open = view.gates.find((g) => g.id === gate!.id);
        tally.attempt(
          open?.status === 'pending' && open.kind === 'approval' && !open.approvals?.length,
          () => `two unsigned approvals counted: ${JSON.stringify(open)}`,
        );
        // Two sealed approvals make it.
        await s.decide({ gateId: gate!.id, choice: 'approve', userId: 'bob' });
        await s.decide({ gateId: gate!.id, choice: 'approve', userId: 'carol' });
        const done = await s.idle();
        expect(done.gates[0]!.resolution).toMatchObject({ outcome: 'approved' });
      },
      { tools: { shell_execute: { selfApprove: false, approvals: 2, approvers: ['bob', 'carol'] } } },
    );
  });
  it("records only the gateway's word that a person connected or disconnected a credential", async () => {
    await withWorker(env, async (taskQueue) => {
      const user = `cred-${randomUUID().slice(0, 8)}`;
      const workflowId = userWorkflowId(user);
      const start = { workflowId, taskQueue, args: [{ userId: user }] as [{ userId: string }] };
      const gateway = sealingClient(env.client, TEST_GATEWAY_KEY);
      const connected = { provider: 'acme', action: 'connected' } as const;
      // The gateway's own word: recorded.
      await gateway.workflow.signalWithStart('userDirectoryWorkflow', {
        ...start,
        signal: credentialChangeSignal,
        signalArgs: [connected],
      });
      const recorded = async () => {
        const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
        return (history.events ?? []).filter(
          (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'recordAudit',
        ).length;
      };
      await until('the change recorded', async () => ((await recorded()) === 1 ? true : undefined));
      const direct = env.client.workflow.getHandle(workflowId);
      const disconnected = { provider: 'acme', action: 'disconnected' } as const;
      // 1. Unsigned, as anyone who reaches Temporal's frontend could send it.
      await direct.signal(credentialChangeSignal, disconnected);
      // 2. Sealed with another key.
      await sealingClient(env.client, 'not-the-gateway-key-0123456789abcdefghijkl')
        .workflow.getHandle(workflowId)
        .signal(credentialChangeSignal, disconnected);
      // 3. The gateway's seal of the connection, moved onto a disconnection.
      const connectSeal = sealSignal(TEST_GATEWAY_KEY, sealedCall('credentialChange', workflowId, connected));
      await direct.signal(credentialChangeSignal, disconnected, connectSeal);
      // 4. The gateway's sealed word, recorded once, then sent again (copied from the history).
      const realSeal = sealSignal(TEST_GATEWAY_KEY, sealedCall('credentialChange', workflowId, disconnected));
      await direct.signal(credentialChangeSignal, disconnected, realSeal);
      await direct.signal(credentialChangeSignal, disconnected, realSeal);
      // Everything is done: four checks (the first, another key's, the moved seal, the real one; the unsigned one and
      // the copy never reach one) and the two records.
      const checked = async () => {
        const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
        return (history.events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
      };
      await until('every check done', async () => ((await checked()) >= 6 ? true : undefined));
      const records = await recorded();
      for (const what of [
        'an unsigned credential change',
        'a credential change sealed with another key',
        "a connection's seal on a disconnection",
        'a sealed credential change sent again',
      ])
        tally.attempt(records === 2, () => `${what} was recorded (${records} records)`);
    });
  });
  it('never records a revocation no gateway sealed as the person’s own act (and never loses one)', async () => {
    await withWorker(env, async (taskQueue) => {
      const s = new TestSession(env.client, taskQueue);
      const always = async (command: string, scope: 'session' | 'user') => {
        await s.say(`run \`${command}\``);
        await s.decide({ gateId: (await s.pendingGate())[0]!.id, choice: 'always', scope });
        await s.idle();
      };
      // Four standing grants of alice's: two in this conversation, two everywhere (in her directory workflow).
      await always('echo here-1', 'session');
      await always('echo here-2', 'session');
      await always('echo everywhere-1', 'user');
      await always('echo everywhere-2', 'user');
      const [forged, real] = (await s.state()).grants;
      const directory = env.client.workflow.getHandle(userWorkflowId('alice'));
      const [forgedEverywhere, realEverywhere] = await directory.query(grantsQuery);
      const gateway = sealingClient(env.client, TEST_GATEWAY_KEY);

      // Unsigned, as anyone who reaches Temporal's frontend could send them; then the gateway's own.
      const conversation = env.client.workflow.getHandle(s.workflowId);
      await conversation.signal(revokeGrantSignal, { grantId: forged!.id, userId: 'alice' });
      await directory.signal(revokeUserGrantSignal, { grantId: forgedEverywhere!.id });
      await gateway.workflow
        .getHandle(s.workflowId)
        .signal(revokeGrantSignal, { grantId: real!.id, userId: 'alice' });
      await gateway.workflow
        .getHandle(userWorkflowId('alice'))
        .signal(revokeUserGrantSignal, { grantId: realEverywhere!.id });

      /** The revocations a workflow recorded: grant id → whether it is marked unverified. */
      const recorded = async (workflowId: string) => {
        const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
        const revoked = new Map<string, boolean>();
        for (const event of history.events ?? []) {
          const scheduled = event.activityTaskScheduledEventAttributes;
          if (scheduled?.activityType?.name !== 'recordAudit') continue;
          const entry = JSON.parse(
            Buffer.from(scheduled.input!.payloads![0]!.data!).toString('utf8'),
          ) as AuditEntry;
          if (entry.type === 'grant') revoked.set(entry.grant!.id, entry.unverified === true);
        }
        return revoked.size === 2 ? revoked : undefined;
      };
      const inConversation = await until('both revocations recorded here', () => recorded(s.workflowId));
      const everywhere = await until('both revocations recorded everywhere', () =>
        recorded(userWorkflowId('alice')),
      );
      // Every grant is gone: a revocation is never lost, whoever sent it.
      expect((await s.state()).grants).toEqual([]);
      expect(await directory.query(grantsQuery)).toEqual([]);
      tally.attempt(
        inConversation.get(forged!.id) === true,
        () => 'an unsigned revocation in a conversation was recorded as the person’s own',
      );
      tally.attempt(
        everywhere.get(forgedEverywhere!.id) === true,
        () => 'an unsigned revocation everywhere was recorded as the person’s own',
      );
      expect(inConversation.get(real!.id)).toBe(false);
      expect(everywhere.get(realEverywhere!.id)).toBe(false);
    });
  });
});

/**
 * Budgets (#22): every model call's usage (the provider's own usage fields, priced with the policy's table)
 * adds up per turn, per conversation and per person per day. A reached limit never fails the session: it
 * opens a budget gate that the person (or, with `selfApprove: false`, an approver) decides like any gate,
 * durably across a worker restart; Continue adds one more allowance, Stop ends the turn with a note.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userWorkflowId } from '../../common/ids';
import { AgentCostUsd, AgentTokens } from '../../common/search-attributes';
import { stopSignal } from '../../workflows/session/contract';
import { RECOVERY_MARKER } from '../../workflows/session/repair';
import { spendQuery } from '../../workflows/user/contract';
import { Tally } from '../chaos/summary';
import type { AppConfig } from '../../infra/config';
import { testConfig } from '../helpers/config';
import { FakeOpenAi } from '../helpers/fake-openai';
import { budgetGateHandingOver, budgetGates } from '../helpers/budget-handover';
import { FakeSlack } from '../helpers/fake-slack';
import { lastAnswer, TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { createTestWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

/** $10 per million input tokens, $40 per million output tokens. */
const PRICES = { 'gpt-5-mini': { input: 10, output: 40 } };

function modelConfig(model: FakeOpenAi, policy: Record<string, unknown>) {
  return testConfig(
    { prices: PRICES, ...policy },
    { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'k' },
  );
}

/** What the fake model server reported, added up the way a bill would. */
function billed(model: FakeOpenAi) {
  return {
    tokens: model.usages.reduce((sum, u) => sum + u.prompt_tokens + u.completion_tokens, 0),
    costUsd: model.usages.reduce(
      (sum, u) => sum + (u.prompt_tokens * 10 + u.completion_tokens * 40) / 1e6,
      0,
    ),
  };
}

describe('budgets', () => {
  it('counts what the provider reports, opens a conversation budget gate, and survives a worker restart at it', async () => {
    const model = await new FakeOpenAi((request) => ({
      text: `answer to ${String(request.messages.at(-1)!.content)}`,
    })).start();
    // One request costs about two cents: the first answer uses up the one-cent conversation budget.
    const config = modelConfig(model, { budgets: { perConversation: { usd: 0.01 } } });
    let session: TestSession;
    const first = await createTestWorker(env, config);
    try {
      await first.worker.runUntil(async () => {
        session = new TestSession(env.client, first.taskQueue);
        await session.say('first question');
        const view = await session.idle();
        expect(lastAnswer(view)).toBe('answer to first question');
        expect(view.usage).toMatchObject({ calls: 1, tokens: billed(model).tokens });
        expect(view.usage!.costUsd).toBeCloseTo(billed(model).costUsd, 9);
        // Operators find it in the Temporal UI by the same figures.
        const attributes = (await session.handle.describe()).typedSearchAttributes;
        expect(attributes.get(AgentTokens)).toBe(billed(model).tokens);
        expect(attributes.get(AgentCostUsd)).toBeCloseTo(billed(model).costUsd, 5);

        await session.say('second question');
        const waiting = await session.waitFor(
          (v) => v.status === 'waiting_approval' && budgetGates(v).length === 1,
          'the budget gate',
        );
        expect(budgetGates(waiting)[0]!.subject).toMatch(
          /^This conversation has used \$0\.0\d+ of \$0\.01\. Continue with \$0\.01 more\?$/,
        );
        expect(model.requests).toHaveLength(1); // the second question waits: no model call yet
        // A budget is continued or stopped, never "always allowed".
        await session.decide({ gateId: budgetGates(waiting)[0]!.id, choice: 'always' });
        await session.waitFor(
          (v) => v.notices.some((n) => n.to === 'alice' && n.text.includes('can only be continued')),
          'always to be refused',
        );
      });

      // The worker is gone; the gate waits in the server. A new worker picks the decision up.
      const second = await createTestWorker(env, config, first.taskQueue);
      await second.worker.runUntil(async () => {
        const gateId = budgetGates(await session.state())[0]!.id;
        await session.decide({ gateId, choice: 'approve' });
        let view = await session.idle();
        expect(lastAnswer(view)).toBe('answer to second question');
        expect(budgetGates(view)[0]).toMatchObject({
          status: 'resolved',
          resolution: { outcome: 'approved', by: 'alice' },
        });
        expect(view.usage).toMatchObject({ calls: 2, tokens: billed(model).tokens });

        // Continuing allowed one more cent from there, and the second answer spent it: alice says Stop this time.
        await session.say('third question');
        view = await session.waitFor((v) => budgetGates(v).length === 2, 'the second budget gate');
        expect(budgetGates(view)[1]!.subject).toMatch(
          /^This conversation has used \$0\.0\d+ of \$0\.0\d+\. Continue with \$0\.01 more\?$/,
        );
        await session.decide({ gateId: budgetGates(view)[1]!.id, choice: 'deny' });
        view = await session.idle();
        expect(lastAnswer(view)).toMatch(
          /^⏸️ I stopped here: This conversation has used .* The budget was stopped by @alice/,
        );
        expect(model.requests).toHaveLength(2);
      });
    } finally {
      await model.stop();
    }
  });

  it("keeps a person's daily budget across conversations; with selfApprove off only an approver may add to it", async () => {
    const model = await new FakeOpenAi(() => ({ text: 'ok' }), { latency: [20, 60] }).start();
    const config = modelConfig(model, {
      approvers: ['carol'],
      // Dave chats on the web as "dave" and in Slack as U0DAVE001: one person, one daily budget.
      users: { dave: { slack: ['U0DAVE001'] } },
      budgets: { perPersonPerDay: { tokens: 100 }, selfApprove: false },
    });
    const { worker, taskQueue } = await createTestWorker(env, config);
    try {
      await worker.runUntil(async () => {
        const morning = new TestSession(env.client, taskQueue);
        await morning.say('hello', 'dave');
        expect(lastAnswer(await morning.idle())).toBe('ok');

        // Another conversation of the same person, from Slack: today's spend is already over 100 tokens.
        const afternoon = new TestSession(env.client, taskQueue);
        await afternoon.say('hello again', 'U0DAVE001');
        const view = await afternoon.waitFor((v) => budgetGates(v).length === 1, 'the daily budget gate');
        const gate = budgetGates(view)[0]!;
        expect(gate.subject).toMatch(
          /^@U0DAVE001 has used [\d,]+ of 100 tokens today \(UTC\)\. Continue with 100 tokens more\?$/,
        );

        await afternoon.decide({ gateId: gate.id, choice: 'approve', userId: 'U0DAVE001' });
        await afternoon.waitFor(
          (v) => v.notices.some((n) => n.to === 'U0DAVE001' && n.text.includes('someone else must approve')),
          'dave to be told an approver must decide',
        );
        await afternoon.decide({ gateId: gate.id, choice: 'approve', userId: 'carol' });
        // Continuing allows 100 tokens more from what was spent: enough for one more call, which answers.
        const after = await afternoon.idle();
        expect(lastAnswer(after)).toBe('ok');
        expect(budgetGates(after)[0]).toMatchObject({ resolution: { outcome: 'approved', by: 'carol' } });
        // Someone else in the same conversation is held to their own (fresh) day, not to dave's.
        await afternoon.say('and me?', 'gus');
        const gus = await afternoon.idle();
        expect(lastAnswer(gus)).toBe('ok');
        expect(budgetGates(gus).filter((g) => g.requesterId === 'gus')).toEqual([]);
        const ledger = await env.client.workflow.getHandle(userWorkflowId('dave')).query(spendQuery);
        const today = Object.values(ledger)[0]!;
        // Both of dave's conversations count in one ledger (gus's call is in his own).
        expect(today).toMatchObject({ calls: 2, raises: 1 });
        expect(today.tokens).toBe(
          billed(model).tokens -
            (model.usages.at(-1)!.prompt_tokens + model.usages.at(-1)!.completion_tokens),
        );
      });
    } finally {
      await model.stop();
    }
  });

  /** A worker in a Slack thread with a 1-token conversation limit, continuing as new after 20 events. */
  async function inSlackHandingOver(
    policy: Record<string, unknown>,
    body: (session: TestSession, slack: FakeSlack, config: AppConfig) => Promise<void>,
  ): Promise<void> {
    const slack = await new FakeSlack().start();
    const config = testConfig(
      { budgets: { perConversation: { tokens: 1 } }, continueAsNewAfterEvents: 20, ...policy },
      { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_API_URL: `${slack.url}/api/` },
    );
    const { worker, taskQueue } = await createTestWorker(env, config);
    try {
      await worker.runUntil(() =>
        body(new TestSession(env.client, taskQueue).inSlackThread(), slack, config),
      );
    } finally {
      await slack.stop();
    }
  }

  it.each([
    {
      case: 'approved',
      choice: 'approve' as const,
      outcome: 'approved',
      ends: 'You said: "second question"',
    },
    { case: 'denied', choice: 'deny' as const, outcome: 'denied', ends: '⏸️ I stopped here' },
    // Approved, and the limit raised meanwhile: the next run needs no approval, and still tells this one.
    {
      case: 'approved, limit raised',
      choice: 'approve' as const,
      outcome: 'approved',
      ends: 'You said: "second question"',
      raise: true,
    },
    // Approved after the deadline: no wait's timer ran, yet the gate expired, as its deadline promised.
    {
      case: 'approved too late',
      choice: 'approve' as const,
      outcome: 'expired',
      ends: '⏸️ I stopped here',
      late: true,
    },
  ])(
    'keeps a budget decision made while the wait hands over to a new run: $case, asked once, told once',
    async ({ choice, outcome, ends, late, raise }) => {
      await inSlackHandingOver(late ? { questionTimeout: '4s' } : {}, async (session, slack, config) => {
        const { gate, firstRun, release } = await budgetGateHandingOver(session, slack);
        // Budget gates last as long as questions (policy questionTimeout).
        if (late) await new Promise((resolve) => setTimeout(resolve, gate.expiresAt! - Date.now() + 200));
        await session.decide({ gateId: gate.id, choice });
        await session.waitFor((v) => budgetGates(v)[0]?.status !== 'pending', 'the decision recorded');
        // The operator raises the limit; the next run reads the policy again.
        if (raise) config.policy.budgets.perConversation = { tokens: 1_000_000 };
        await release();

        const view = await session.waitFor(
          (v) => v.status === 'idle' && !!lastAnswer(v)?.startsWith(ends),
          'the turn to end',
        );
        expect((await session.handle.describe()).runId).not.toBe(firstRun);
        expect(budgetGates(view).map((g) => g.resolution?.outcome)).toEqual([outcome]);
        // The new run goes on with the turn it was handed: the person is not told it was interrupted.
        expect(view.transcript.filter((m) => m.role === 'assistant' && m.text === RECOVERY_MARKER)).toEqual(
          [],
        );
        const sent = ['chat.postMessage', 'chat.startStream', 'chat.appendStream', 'chat.stopStream'];
        expect(
          sent.flatMap((m) => slack.of(m)).filter((b) => JSON.stringify(b).includes('interrupted')),
        ).toEqual([]);
        // The decision is told once, by the new run: the prompt in the thread is edited to show it.
        const posts = budgetGates(view)[0]!.posts ?? [];
        expect(posts).toHaveLength(1);
        expect(slack.of('chat.update').filter((body) => posts.includes(String(body.ts)))).toHaveLength(1);
      });
    },
  );

  it('ends a turn stopped while its run hands over: the gate closes as stopped, and the next message is answered', async () => {
    await inSlackHandingOver({}, async (session, slack) => {
      const { gate, release } = await budgetGateHandingOver(session, slack);
      await session.handle.signal(stopSignal, { userId: 'alice' });
      const stopped = await session.waitFor(
        (v) => v.status === 'idle' && !!lastAnswer(v)?.startsWith('⏹️ Stopped by @alice'),
        'the turn to stop while Slack still holds the deliveries',
      );
      expect(budgetGates(stopped).find((g) => g.id === gate.id)?.resolution?.outcome).toBe('stopped');
      await release();
      await session.say('third question');
      const [next] = (await session.pendingGate()).filter((g) => g.id !== gate.id);
      await session.decide({ gateId: next!.id, choice: 'approve' });
      await session.waitFor(
        (v) => v.status === 'idle' && !!lastAnswer(v)?.startsWith('You said: "third question"'),
        'the third answer',
      );
    });
  });

  it('refuses every way around a budget gate (scoreboard)', async () => {
    const model = await new FakeOpenAi(() => ({ text: 'ok' }), { latency: [20, 60] }).start();
    const config = modelConfig(model, {
      approvers: ['carol'],
      budgets: { perConversation: { tokens: 1 }, perPersonPerDay: { tokens: 1 }, selfApprove: false },
    });
    const tally = new Tally();
    const refused = async (session: TestSession, who: string, what: string, text: RegExp) => {
      const view = await session.waitFor(
        (v) => v.notices.some((n) => n.to === who && text.test(n.text)),
        `${what} to be refused`,
      );
      tally.check(
        budgetGates(view).every((g) => g.status === 'pending'),
        () => `${what} changed the gate`,
      );
      if (budgetGates(view).some((g) => g.status !== 'pending')) tally.lost++;
    };
    const { worker, taskQueue } = await createTestWorker(env, config);
    try {
      await worker.runUntil(async () => {
        const session = new TestSession(env.client, taskQueue);
        await session.say('hello', 'erin');
        await session.idle();
        await session.say('more', 'erin');
        const view = await session.waitFor((v) => budgetGates(v).length === 1, 'the budget gate');
        const gateId = budgetGates(view)[0]!.id;
        const calls = model.requests.length;

        await session.decide({ gateId, choice: 'approve', userId: 'erin' });
        await refused(
          session,
          'erin',
          'the requester continuing with selfApprove off',
          /someone else must approve/,
        );
        await session.decide({ gateId, choice: 'approve', userId: 'mallory' });
        await refused(session, 'mallory', 'a stranger continuing', /You may not decide/);
        await session.say('approve', 'mallory');
        await refused(session, 'mallory', 'a stranger typing approve', /You may not decide/);
        await session.decide({ gateId, choice: 'always', userId: 'carol' });
        await refused(session, 'carol', 'allow-always on a budget', /can only be continued/);
        await session.decide({ gateId, choice: 'edit', userId: 'carol', args: { more: '$1000' } });
        await refused(session, 'carol', 'edited budget arguments', /can only be continued/);
        // A fresh conversation the same day does not start from zero: the daily limit is the person's.
        const dodge = new TestSession(env.client, taskQueue);
        await dodge.say('hello from elsewhere', 'erin');
        const dodged = await dodge.waitFor((v) => budgetGates(v).length === 1, 'the daily gate elsewhere');
        tally.check(
          /^@erin has used/.test(budgetGates(dodged)[0]!.subject),
          () => 'a new conversation escaped the daily limit',
        );
        // Stopped, the conversation makes no model call: nothing was spent past the limit.
        await session.decide({ gateId, choice: 'deny', userId: 'carol' });
        await session.idle();
        tally.check(
          model.requests.length === calls,
          () => `${model.requests.length - calls} model calls past the limit`,
        );
        if (model.requests.length !== calls) tally.lost++;
      });
    } finally {
      await model.stop();
      if (tally.runs) tally.finish('budgets: continuing past a limit');
    }
  });
});

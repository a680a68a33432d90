/**
 * One person, several channels: a gate under a quorum of two is posted as a Teams card and mailed to its deciders.
 * Bob approves on the card and then again from his mail's page: he counts once, whatever channel he used; "Needs you"
 * lists the gate once for him although he is known by a Teams id and an address; carol's approval from her mail is
 * the second, and the command runs once. The card is edited in place to say who decided, with the channel of each.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { personOn } from '../../common/gates/deciders';
import { teamsSessionWorkflowId } from '../../platforms/teams/ids';
import { stateQuery, type ApprovalGate, type SessionView } from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { FakeSmtp, gateLinkIn, mailTo, postMailPage } from '../helpers/fake-smtp';
import { FakeTeams, teamsCardAction, teamsMessage } from '../helpers/fake-teams';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;
const teams = new FakeTeams();
const smtp = new FakeSmtp();
const tally = new Tally();
const ALICE = randomUUID();
const BOB = randomUUID();

beforeAll(async () => {
  await teams.start();
  await smtp.start();
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      reminderAfter: 'never',
      tools: { shell_execute: { selfApprove: false, approvals: 2, approvers: ['bob', 'carol'] } },
      users: {
        alice: { teams: [ALICE], email: 'alice@example.com' },
        bob: { teams: [BOB], email: 'bob@example.com' },
        carol: { email: 'carol@example.com' },
      },
    },
    env: { ...teams.env(), ...smtp.env() },
  });
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('channels: one person counts once in a quorum, whatever channel they use');
  } finally {
    await stack?.stop();
    await env?.teardown();
    await teams.stop();
    smtp.stop();
  }
});

const signed = (activity: Record<string, unknown>) => teams.signed(stack.port, activity);

describe('one person across Teams, e-mail and the web', () => {
  it('counts bob once in a quorum of two, whether he approves on the card, by mail or both', async () => {
    const conversationId = `19:${randomUUID()}@thread.v2`;
    const workflowId = teamsSessionWorkflowId({ serviceUrl: teams.serviceUrl, conversationId });
    const view = () => env.client.workflow.getHandle(workflowId).query(stateQuery) as Promise<SessionView>;
    const gateNow = async (id: string) =>
      (await view()).gates.find((g) => g.id === id) as ApprovalGate | undefined;
    const ran = () => {
      const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, workflowId), 'quorum.txt');
      return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
    };

    await signed(teamsMessage(teams.serviceUrl, conversationId, ALICE, 'run `echo two >> quorum.txt`'));
    const [posted] = await until('the approval card', () => {
      const cards = teams.cards(conversationId).filter((c) => c.method === 'POST');
      return cards.length ? cards : undefined;
    });
    const gateId = (posted!.card.actions as { data: { g: string } }[])[0]!.data.g;
    expect(JSON.stringify(posted!.card)).toContain(
      'Needs 2 approvals from different people among @bob, @carol',
    );
    const mailsFor = await until(
      "the deciders' mails",
      () => {
        const forGate = smtp.mails.filter((m) => m.subject?.includes('shell_execute'));
        const byTo = new Map(forGate.map((m) => [mailTo(m), m]));
        return byTo.has('bob@example.com') && byTo.has('carol@example.com') ? byTo : undefined;
      },
      { timeoutMs: 60_000 },
    );

    // "Needs you" lists the gate once for bob, though he has a Teams id and an address.
    const listed = await until('the gate in bob\'s "Needs you"', async () => {
      const inbox = await stack.web.request('GET', '/inbox', undefined, 'bob');
      // Reads are rate-limited per person (one a second): a refused read is asked again after it.
      if (inbox.status === 429) return void (await new Promise((resolve) => setTimeout(resolve, 1_000)));
      expect(inbox.status, JSON.stringify(inbox.body)).toBe(200);
      const items = (inbox.body as { items: unknown[] }).items.filter((item) =>
        JSON.stringify(item).includes(gateId),
      );
      return items.length ? items : undefined;
    });
    expect(listed).toHaveLength(1);

    // Bob on the card: counted, 1 of 2.
    const onCard = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.approve', { g: gateId }),
    );
    expect(JSON.stringify(onCard.body), JSON.stringify(onCard.body)).toMatch(/1 of 2/);
    await until('the first approval', async () =>
      (await gateNow(gateId))?.approvals?.length === 1 ? true : undefined,
    );

    // Bob again, now from his mail's page, and again on the card: neither is a second approval.
    const byMail = await postMailPage(stack, gateLinkIn(mailsFor.get('bob@example.com')!)!, 'bob', {
      choice: 'approve',
    });
    tally.attempt(
      byMail.status === 409 && byMail.text.includes('You already approved'),
      () => `bob's second approval by mail: ${byMail.status} ${byMail.text.slice(0, 200)}`,
    );
    const cardAgain = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.approve', { g: gateId }),
    );
    tally.attempt(
      JSON.stringify(cardAgain.body).includes('already approved'),
      () => `bob's second click: ${JSON.stringify(cardAgain.body).slice(-700)}`,
    );
    const afterBob = (await gateNow(gateId))!;
    tally.attempt(
      afterBob.status === 'pending' && afterBob.approvals?.length === 1,
      () => `bob counted twice: ${afterBob.status}, ${JSON.stringify(afterBob.approvals)}`,
    );
    tally.attempt(ran() === 0, () => 'the command ran on one person');

    // Alice asked, so her mail's page lets her deny but not approve.
    const alices = smtp.mails.find(
      (m) => m.subject?.includes('shell_execute') && mailTo(m) === 'alice@example.com',
    );
    if (alices) {
      const byAlice = await postMailPage(stack, gateLinkIn(alices)!, 'alice', { choice: 'approve' });
      tally.attempt(byAlice.status >= 400, () => `the requester approved her own call: ${byAlice.status}`);
    }
    tally.attempt(
      (await gateNow(gateId))?.approvals?.length === 1,
      () => 'the requester counted toward the quorum',
    );

    // Carol, by mail: the second person; the command runs once; the card says who, and where.
    const carol = await postMailPage(stack, gateLinkIn(mailsFor.get('carol@example.com')!)!, 'carol', {
      choice: 'approve',
    });
    expect(carol.status).toBe(200);
    expect(carol.text).toMatch(/approved/);
    await until('the command', () => (ran() === 1 ? true : undefined), { timeoutMs: 90_000 });
    const decided = (await gateNow(gateId))!;
    expect(decided.resolution?.outcome).toBe('approved');
    // Two people; bob's approval is recorded as the Teams id he clicked with, which the gate knows is bob.
    expect(decided.approvals?.map((a) => personOn(decided, a.by)).sort()).toEqual(['bob', 'carol']);
    // Where each decided, as the gateway told it: carol's mail page decides as her web identity, yet reads e-mail.
    expect(decided.approvals?.map((a) => [personOn(decided, a.by), a.via])).toEqual([
      ['bob', 'teams'],
      ['carol', 'email'],
    ]);
    const edited = await until('the card edited to the decision', () =>
      teams
        .cards(conversationId)
        .find(
          (c) =>
            c.method === 'PUT' &&
            c.activityId === posted!.activityId &&
            JSON.stringify(c.card).includes('approved'),
        ),
    );
    expect(JSON.stringify(edited.card)).toMatch(/@bob/);
    expect(JSON.stringify(edited.card)).toMatch(/@carol by e-mail/);
    expect(JSON.stringify(edited.card)).toMatch(/@bob in Teams/);
    expect(edited.card.actions).toBeUndefined();
    await until('the turn', async () => ((await view()).status === 'idle' ? true : undefined));
    expect(ran()).toBe(1);
  }, 300_000);
});

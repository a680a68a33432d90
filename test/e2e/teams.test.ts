/**
 * The Teams channel against a fake Bot Connector at its protocol boundary (test/helpers/fake-teams.ts), with
 * activities signed as the connector signs them (RS256, keys from its OpenID metadata): a message starts a session,
 * its approval is an Adaptive Card; a click (Universal Actions' invoke) is answered with no worker running, and the
 * tool runs once when the worker is back, the posted card edited in place to the decision; forged, expired,
 * wrong-audience, wrong-issuer, re-targeted and replayed activities get nothing through.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { teamsSessionWorkflowId } from '../../platforms/teams/ids';
import type { SessionView } from '../../workflows/session/contract';
import { stateQuery } from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { FakeTeams, teamsCardAction, teamsMessage } from '../helpers/fake-teams';
import { historyText } from '../helpers/history';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;
const teams = new FakeTeams();
const tally = new Tally();
const ALICE = randomUUID();
const BOB = randomUUID();
const MALLORY = randomUUID();

beforeAll(async () => {
  await teams.start();
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      approvers: [`teams:${BOB}`],
      users: { alice: { teams: [ALICE] }, bob: { teams: [BOB] } },
      providers: {
        weather: { type: 'api_key', displayName: 'Weather', header: 'X-Api-Key', apiHosts: ['127.0.0.1:9'] },
      },
    },
    env: teams.env(),
  });
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('teams: forged, expired, wrong-audience and replayed activities');
  } finally {
    await stack?.stop();
    await env?.teardown();
    await teams.stop();
  }
});

const send = (activity: Record<string, unknown>, token?: string) => teams.send(stack.port, activity, token);
const signed = (activity: Record<string, unknown>) => teams.signed(stack.port, activity);

const workflowOf = (conversationId: string) =>
  teamsSessionWorkflowId({ serviceUrl: teams.serviceUrl, conversationId });
const viewOf = async (conversationId: string) =>
  (await env.client.workflow.getHandle(workflowOf(conversationId)).query(stateQuery)) as SessionView;
const lines = (conversationId: string, file: string) => {
  const full = path.join(sessionWorkdir(stack.env.DATA_DIR!, workflowOf(conversationId)), file);
  return existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length : 0;
};
const cardText = (card: Record<string, unknown>) => JSON.stringify(card);

describe('Microsoft Teams', () => {
  it('posts an approval as an Adaptive Card; a click with no worker is answered and the tool runs once after', async () => {
    const conversationId = `19:${randomUUID()}@thread.v2`;
    expect(
      (
        await signed(
          teamsMessage(teams.serviceUrl, conversationId, ALICE, '<at>Agent</at> run `echo teams >> t.txt`'),
        )
      ).status,
    ).toBe(200);
    const [posted] = await until('the approval card', () => {
      const cards = teams.cards(conversationId).filter((c) => c.method === 'POST');
      return cards.length ? cards : undefined;
    });
    expect(cardText(posted!.card)).toContain('Approval needed: shell_execute requested by @alice');
    expect(cardText(posted!.card)).toContain('echo teams >> t.txt');
    const actions = (posted!.card.actions as { type: string; verb: string; data: { g: string } }[]) ?? [];
    expect(actions.map((a) => [a.type, a.verb])).toEqual([
      ['Action.Execute', 'gate.approve'],
      ['Action.Execute', 'gate.deny'],
      ['Action.Execute', 'gate.always'],
      ['Action.Execute', 'gate.edit'],
    ]);
    const gateId = actions[0]!.data.g;
    // The bot got its token from the token endpoint with its own credentials; it never sent the secret anywhere else.
    expect(teams.tokenRequests.at(-1)?.get('scope')).toBe('https://api.botframework.com/.default');

    // Attacks on the endpoint: none is taken.
    const click = teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.approve', { g: gateId });
    const { privateKey: otherKey } = await generateKeyPair('RS256');
    const attacks: [string, () => Promise<{ status: number }>][] = [
      ['no token', () => send(click)],
      [
        'a token signed by another key',
        async () => send(click, await teams.token(teams.serviceUrl, { key: otherKey })),
      ],
      ['an expired token', async () => send(click, await teams.token(teams.serviceUrl, { expiresIn: -600 }))],
      [
        'a token for another bot',
        async () => send(click, await teams.token(teams.serviceUrl, { audience: randomUUID() })),
      ],
      [
        'a token from another issuer',
        async () => send(click, await teams.token(teams.serviceUrl, { issuer: 'https://evil.example' })),
      ],
      [
        "a token whose serviceurl is not the activity's",
        async () =>
          send({ ...click, serviceUrl: 'http://127.0.0.1:9/' }, await teams.token(teams.serviceUrl)),
      ],
      [
        'a token with alg none',
        async () =>
          send(
            click,
            `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ aud: teams.appId, iss: 'https://api.botframework.com', serviceurl: teams.serviceUrl, exp: 9999999999 })).toString('base64url')}.`,
          ),
      ],
      [
        'a token with an unknown key id',
        async () => send(click, await teams.token(teams.serviceUrl, { kid: 'nope' })),
      ],
    ];
    for (const [what, attempt] of attacks) {
      const answer = await attempt();
      tally.attempt(answer.status === 401, () => `${what} was taken: ${answer.status}`);
    }
    tally.attempt(
      (await viewOf(conversationId)).gates.find((g) => g.id === gateId)?.status === 'pending',
      () => 'a forged click decided the gate',
    );

    // Someone who may not decide it clicks: the card tells them; nothing runs.
    const mallory = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, MALLORY, 'gate.approve', { g: gateId }),
    );
    expect(mallory.status).toBe(200);
    expect(JSON.stringify(mallory.body)).toMatch(/may|only|not/i);
    expect((await viewOf(conversationId)).gates.find((g) => g.id === gateId)?.status).toBe('pending');

    // The worker is gone; bob approves: answered at once, kept, run once when the worker is back.
    await stack.worker.kill('SIGKILL');
    const offline = await signed(click);
    expect(offline.status).toBe(200);
    expect(offline.body).toMatchObject({ statusCode: 200, type: 'application/vnd.microsoft.card.adaptive' });
    expect(JSON.stringify(offline.body)).toContain(
      'Sent: the agent acts on it as soon as it is running again',
    );
    expect(lines(conversationId, 't.txt')).toBe(0);
    await stack.restartWorker();
    await until('the command', () => lines(conversationId, 't.txt') === 1 || undefined, {
      timeoutMs: 90_000,
    });
    // The posted card is edited in place to the decision, for everyone.
    const edited = await until('the card edited to the decision', () =>
      teams
        .cards(conversationId)
        .find(
          (c) =>
            c.method === 'PUT' &&
            c.activityId === posted!.activityId &&
            cardText(c.card).includes('approved'),
        ),
    );
    expect(cardText(edited.card)).toMatch(/approved by @bob in Teams at \d\d:\d\d UTC/);
    expect(edited.card.actions).toBeUndefined();
    // The same click again: told it was decided, nothing runs twice.
    const again = await signed(click);
    expect(JSON.stringify(again.body)).toMatch(/approved/);
    await until('the answer', async () =>
      (await viewOf(conversationId)).status === 'idle' ? true : undefined,
    );
    expect(lines(conversationId, 't.txt')).toBe(1);
    expect(teams.texts(conversationId).join('\n')).toMatch(/shell_execute/);

    // A replayed message (same activity, same token) is one message.
    const hello = teamsMessage(teams.serviceUrl, conversationId, ALICE, 'hello once');
    const token = await teams.token(teams.serviceUrl);
    await send(hello, token);
    await send(hello, token);
    await until('the reply', async () =>
      (await viewOf(conversationId)).status === 'idle' ? true : undefined,
    );
    const said = (await viewOf(conversationId)).transcript.filter(
      (m) => m.role === 'user' && m.text === 'hello once',
    );
    tally.attempt(said.length === 1, () => `a replayed activity was taken ${said.length} times`);

    // The bot's secret and tokens are in no history.
    const history = historyText(
      await env.client.workflow.getHandle(workflowOf(conversationId)).fetchHistory(),
    );
    expect(history).not.toContain(teams.appPassword);
    expect(history).not.toContain('bot-token-');
  }, 300_000);

  it("asks a question as a card with its choices, and the card's Submit answers it as the clicker", async () => {
    const conversationId = `a:${randomUUID()}`;
    await signed(teamsMessage(teams.serviceUrl, conversationId, ALICE, 'ask one'));
    const [posted] = await until('the question card', () => {
      const cards = teams.cards(conversationId).filter((c) => c.method === 'POST');
      return cards.length ? cards : undefined;
    });
    const card = posted!.card as {
      body: { type: string; id?: string; choices?: { value: string }[] }[];
      actions: { verb: string; data: { g: string } }[];
    };
    const choiceSet = card.body.find((e) => e.type === 'Input.ChoiceSet')!;
    expect(choiceSet.choices!.length).toBeGreaterThan(0);
    expect(card.actions.map((a) => a.verb)).toEqual(['gate.answer']);
    const gateId = card.actions[0]!.data.g;
    // The card's inputs come back merged into the action's data, as Teams sends them.
    const answered = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, ALICE, 'gate.answer', {
        g: gateId,
        [choiceSet.id!]: choiceSet.choices![0]!.value,
      }),
    );
    expect(answered.status).toBe(200);
    expect(JSON.stringify(answered.body)).toMatch(/answered by @alice/);
    await until('the answer', async () =>
      (await viewOf(conversationId)).status === 'idle' ? true : undefined,
    );
    const view = await viewOf(conversationId);
    expect(view.gates.find((g) => g.id === gateId)?.resolution).toMatchObject({ outcome: 'answered' });
    expect(view.transcript.at(-1)).toMatchObject({
      role: 'assistant',
      text: expect.stringContaining('Thanks!'),
    });
  }, 120_000);

  it("edits and approves a call from the card: the form is the clicker's, the edited command runs", async () => {
    const conversationId = `a:${randomUUID()}`;
    await signed(teamsMessage(teams.serviceUrl, conversationId, ALICE, 'run `echo first >> e.txt`'));
    const [posted] = await until('the approval card', () => {
      const cards = teams.cards(conversationId).filter((c) => c.method === 'POST');
      return cards.length ? cards : undefined;
    });
    const gateId = (posted!.card.actions as { data: { g: string } }[])[0]!.data.g;
    const form = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.edit', { g: gateId }),
    );
    const formCard = (form.body as { value: { body: { id?: string; value?: string }[] } }).value;
    const argsInput = formCard.body.find((e) => e.id === 'args')!;
    expect(JSON.parse(argsInput.value!)).toEqual({ command: 'echo first >> e.txt' });
    // Not JSON: the form again, nothing decided.
    const bad = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.editApprove', {
        g: gateId,
        args: '{nope',
      }),
    );
    expect(JSON.stringify(bad.body)).toContain('Approve as edited');
    expect((await viewOf(conversationId)).gates.find((g) => g.id === gateId)?.status).toBe('pending');
    const done = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.editApprove', {
        g: gateId,
        args: JSON.stringify({ command: 'echo edited >> e.txt' }),
      }),
    );
    expect(JSON.stringify(done.body)).toMatch(/approved/);
    await until('the edited command', () => lines(conversationId, 'e.txt') === 1 || undefined, {
      timeoutMs: 60_000,
    });
    const full = path.join(sessionWorkdir(stack.env.DATA_DIR!, workflowOf(conversationId)), 'e.txt');
    expect(readFileSync(full, 'utf8').trim()).toBe('edited');
  }, 120_000);

  it('asks for a sign-in with a Connect card: only who asked gets their own link, on a card for them alone', async () => {
    const conversationId = `a:${randomUUID()}`;
    await signed(
      teamsMessage(teams.serviceUrl, conversationId, ALICE, 'fetch http://127.0.0.1:9/forecast with weather'),
    );
    const [posted] = await until('the sign-in card', () => {
      const cards = teams.cards(conversationId).filter((c) => c.method === 'POST');
      return cards.length ? cards : undefined;
    });
    const action = (posted!.card.actions as { verb: string; data: { g: string } }[] | undefined)?.[0];
    if (!action) throw new Error(`no action on ${cardText(posted!.card)}`);
    expect(action.verb).toBe('gate.connect');
    const bobs = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.connect', action.data),
    );
    expect(JSON.stringify(bobs.body)).toContain('Only @alice, who asked, can connect');
    expect(JSON.stringify(bobs.body)).not.toContain('Action.OpenUrl');
    const alices = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, ALICE, 'gate.connect', action.data),
    );
    const open = (alices.body as { value: { actions: { type: string; url: string }[] } }).value.actions[0]!;
    expect(open.type).toBe('Action.OpenUrl');
    expect(
      open.url.startsWith(`http://localhost:${stack.port}/`) ||
        open.url.startsWith(`http://127.0.0.1:${stack.port}/`),
    ).toBe(true);
    // Her link is not on the conversation's card.
    expect(teams.cards(conversationId).some((c) => cardText(c.card).includes(open.url))).toBe(false);
  }, 120_000);

  it("posts a mission run's gate in its owner's conversation; the card's click decides the run's gate", async () => {
    const conversationId = `a:${randomUUID()}`;
    await signed(
      teamsMessage(
        teams.serviceUrl,
        conversationId,
        ALICE,
        'call mission_create {"name": "teams mission", "goal": "run `echo teams-mission`", "cadence": "manual"}',
      ),
    );
    await until('the mission created', async () =>
      (await viewOf(conversationId)).status === 'idle' ? true : undefined,
    );
    await signed(teamsMessage(teams.serviceUrl, conversationId, ALICE, 'call mission_fire "teams mission"'));
    const card = await until(
      'the run gate card',
      () =>
        teams
          .cards(conversationId)
          .find((c) => c.method === 'POST' && cardText(c.card).includes('echo teams-mission')),
      { timeoutMs: 60_000 },
    );
    const gateId = (card.card.actions as { data: { g: string } }[])[0]!.data.g;
    const clicked = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, ALICE, 'gate.approve', { g: gateId }),
    );
    expect(clicked.status).toBe(200);
    await until(
      'the run report',
      () => teams.texts(conversationId).some((t) => t.startsWith('**teams mission** (run 1)')) || undefined,
      { timeoutMs: 90_000 },
    );
    expect(teams.texts(conversationId).find((t) => t.startsWith('**teams mission** (run 1)'))).toContain(
      'teams-mission',
    );
  }, 180_000);

  it('denies with the reason typed on the card, and always allows a command for the conversation', async () => {
    const conversationId = `a:${randomUUID()}`;
    const cardOf = async (command: string) =>
      await until(`the card for ${command}`, () =>
        teams.cards(conversationId).find((c) => c.method === 'POST' && cardText(c.card).includes(command)),
      );
    await signed(teamsMessage(teams.serviceUrl, conversationId, ALICE, 'run `echo denied >> d.txt`'));
    const denied = await cardOf('echo denied');
    const deniedGate = (denied.card.actions as { data: { g: string } }[])[0]!.data.g;
    const answer = await signed(
      teamsCardAction(teams.serviceUrl, conversationId, BOB, 'gate.deny', {
        g: deniedGate,
        reason: 'not on Fridays',
      }),
    );
    expect(JSON.stringify(answer.body)).toMatch(/denied by @bob/);
    await until('the denial', async () =>
      (await viewOf(conversationId)).status === 'idle' ? true : undefined,
    );
    const view = await viewOf(conversationId);
    expect(view.gates.find((g) => g.id === deniedGate)?.resolution).toMatchObject({
      outcome: 'denied',
      reason: 'not on Fridays',
    });
    expect(lines(conversationId, 'd.txt')).toBe(0);

    await signed(teamsMessage(teams.serviceUrl, conversationId, ALICE, 'run `echo always >> a.txt`'));
    const always = await cardOf('echo always >> a.txt');
    const alwaysGate = (always.card.actions as { data: { g: string } }[])[0]!.data.g;
    // A grant is the granter's own: alice, who asks, allows her own command for this conversation.
    await signed(teamsCardAction(teams.serviceUrl, conversationId, ALICE, 'gate.always', { g: alwaysGate }));
    await until('the first run', () => lines(conversationId, 'a.txt') === 1 || undefined, {
      timeoutMs: 60_000,
    });
    await until('idle', async () => ((await viewOf(conversationId)).status === 'idle' ? true : undefined));
    // The standing approval is recorded for the conversation, exactly for this command.
    const grants = (await viewOf(conversationId)).grants;
    expect(grants.map((g) => [g.toolName, g.scope])).toEqual([['shell_execute', 'session']]);
  }, 180_000);
});

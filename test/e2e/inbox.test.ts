/**
 * "Needs you" end to end: two people, three channels and a mission run. Alice is one person across channels (the
 * policy's users table maps her Slack and Discord ids); Bob is a configured approver. Gates opened in a web
 * conversation, a Slack thread (signed requests), a Discord channel (signed interactions) and a mission run appear
 * in each inbox they may decide, once, with the workflow's own rule; a batch decided from the web runs each call
 * once; what is no longer waiting, or is not the person's to decide, is refused with a reason.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideSignal, stateQuery, type SessionView } from '../../workflows/session/contract';
import type { InboxItem } from '../../gateways/web/inbox';
import { DiscordKeys, DiscordRequests } from '../helpers/discord-requests';
import { FAKE_CHANNEL, FakeDiscord } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { mention, SlackRequests } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { TEST_GATEWAY_KEY } from '../helpers/config';
import { sealingClient } from '../../infra/temporal/sealing-interceptor';
import { Tally } from '../chaos/summary';

const SECRET = 'slack-signing-secret-for-the-inbox';
const ALICE_DISCORD = '100000000000000001';

let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let discord: FakeDiscord;
let stack: Stack;
let slackRequests: SlackRequests;
let discordRequests: DiscordRequests;

beforeAll(async () => {
  env = await startTestTemporal();
  [slack, discord] = await Promise.all([new FakeSlack().start(), new FakeDiscord().start()]);
  const keys = new DiscordKeys();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      approvers: ['bob'],
      users: { alice: { slack: ['U1'], discord: [ALICE_DISCORD] } },
    },
    env: {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: `${slack.url}/api/`,
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: keys.publicKeyHex,
      DISCORD_API_URL: discord.url,
    },
  });
  slackRequests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
  discordRequests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);
});

afterAll(async () => {
  await stack?.stop();
  await Promise.all([slack?.stop(), discord?.stop()]);
  await env?.teardown();
});

async function inbox(user: string): Promise<{ items: InboxItem[]; unreadable: number }> {
  const response = await stack.web.request('GET', '/inbox', undefined, user);
  expect(response.status).toBe(200);
  return response.body as { items: InboxItem[]; unreadable: number };
}

const view = (workflowId: string) =>
  env.client.workflow.getHandle(workflowId).query(stateQuery) as Promise<SessionView>;
const toolResults = async (workflowId: string) =>
  (await view(workflowId)).transcript.filter((m) => m.role === 'tool');

describe('the "needs you" inbox', () => {
  const ids: Record<string, string> = {};

  it('lists web, Slack, Discord and mission-run decisions to each person who may decide them, once', async () => {
    // Web: an approval and a question.
    await stack.web.say('inbox-web', 'run `echo from-web`');
    await stack.web.pendingGate('inbox-web');
    ids.web = 'session:web:inbox-web';
    await stack.web.say('inbox-question', 'ask one');
    await stack.web.pendingGate('inbox-question');
    // Slack, as Alice's Slack id.
    const event = mention('run `echo from-slack`');
    expect((await slackRequests.event(event)).status).toBe(200);
    ids.slack = `session:slack:T1:C1:${event.ts}`;
    // Discord, as Alice's Discord id.
    expect((await discordRequests.ask(FAKE_CHANNEL, ALICE_DISCORD, 'run `echo from-discord`')).status).toBe(
      200,
    );
    ids.discord = `session:discord:${FAKE_CHANNEL}`;
    // A mission of Alice's whose run waits on a gate.
    await stack.web.say(
      'inbox-owner',
      'call mission_create {"name": "nightly", "goal": "run `echo from-mission`", "cadence": "manual"}',
    );
    await stack.web.answered('inbox-owner');
    await stack.web.say('inbox-owner', 'call mission_fire "nightly"');

    const alice = await until(
      "Alice's inbox to hold all five",
      async () => {
        const listed = await inbox('alice');
        return listed.items.length >= 5 ? listed : undefined;
      },
      { timeoutMs: 45_000 },
    );
    const byWhere = Object.fromEntries(alice.items.map((i) => [i.workflowId, i]));
    expect(Object.keys(byWhere)).toHaveLength(5); // the run's gate once, not again from the owner's conversation
    expect(byWhere[ids.web]).toMatchObject({
      channel: 'web',
      kind: 'approval',
      decideAs: 'alice',
      mayApprove: true,
      sessionId: 'inbox-web',
    });
    expect(byWhere[ids.web]!.asks).toContain('echo from-web');
    expect(byWhere[ids.web]!.rule).toBe('Who may decide: @alice, @bob.');
    expect(byWhere[ids.slack]).toMatchObject({ channel: 'slack', decideAs: 'U1', requesterId: 'alice' });
    expect(byWhere[ids.discord]).toMatchObject({ channel: 'discord', decideAs: ALICE_DISCORD });
    expect(byWhere['session:web:inbox-question']).toMatchObject({ kind: 'question' });
    const run = alice.items.find((i) => i.channel === 'mission')!;
    expect(run.where).toBe('mission nightly');
    expect(run.asks).toContain('echo from-mission');
    ids.run = run.workflowId;
    // Newest first.
    expect(alice.items.map((i) => i.createdAt)).toEqual(
      [...alice.items.map((i) => i.createdAt)].sort((a, b) => b - a),
    );

    // Bob approves for everyone; a stranger sees nothing.
    const bob = await inbox('bob');
    expect(new Set(bob.items.map((i) => i.workflowId))).toEqual(new Set(Object.keys(byWhere)));
    expect(bob.items.every((i) => i.decideAs === 'bob')).toBe(true);
    expect((await inbox('eve')).items).toEqual([]);
  });

  it('decides a batch from the web: each call runs once, in its own channel', async () => {
    const bob = await inbox('bob');
    const batch = bob.items
      .filter((i) => [ids.web, ids.slack, ids.discord].includes(i.workflowId))
      .map(({ workflowId, gateId }) => ({ workflowId, gateId }));
    expect(batch).toHaveLength(3);
    const decided = await stack.web.request(
      'POST',
      '/inbox/decisions',
      { items: batch, choice: 'approve' },
      'bob',
    );
    expect(decided.status).toBe(200);
    expect(decided.body.outcomes.every((o: { ok: boolean }) => o.ok)).toBe(true);
    for (const workflowId of [ids.web!, ids.slack!, ids.discord!])
      await until(
        `the approved call in ${workflowId}`,
        async () => (await toolResults(workflowId)).length === 1,
      );
    // Each gate records where bob decided: on the web, though two of them wait in Slack and Discord.
    for (const workflowId of [ids.web!, ids.slack!, ids.discord!]) {
      const gate = (await view(workflowId)).gates.find((g) => g.status !== 'pending');
      expect(gate?.kind === 'approval' && gate.approvals, workflowId).toEqual([
        expect.objectContaining({ by: 'bob', via: 'web' }),
      ]);
      expect(gate?.resolution).toMatchObject({ by: 'bob', via: 'web' });
    }
    // The Slack thread says who approved, as for a click there.
    await until('the Slack thread told', () =>
      slack.of('chat.update').some((m) => JSON.stringify(m).includes('@bob')),
    );

    // The same batch again: nothing is waiting any more, nothing runs twice.
    const again = await stack.web.request(
      'POST',
      '/inbox/decisions',
      { items: batch, choice: 'approve' },
      'bob',
    );
    expect(again.body.outcomes.map((o: { error?: string }) => o.error)).toEqual(
      Array(3).fill('no longer waiting on you'),
    );
    for (const workflowId of [ids.web!, ids.slack!, ids.discord!])
      expect(await toolResults(workflowId)).toHaveLength(1);
    expect((await inbox('alice')).items.map((i) => i.workflowId).sort()).toEqual(
      ['session:web:inbox-question', ids.run].sort(),
    );
  });

  it('lets the people who may decide read a Slack conversation on the web, and nobody else', async () => {
    const path = `/conversations/${encodeURIComponent(ids.slack!)}`;
    for (const user of ['alice', 'bob']) {
      const read = await stack.web.request('GET', path, undefined, user);
      expect(read.status, user).toBe(200);
      expect(read.body.readOnly).toBe(true);
      expect(JSON.stringify(read.body.transcript)).toContain('from-slack');
    }
    expect((await stack.web.request('GET', path, undefined, 'eve')).status).toBe(404);
    const web = await stack.web.request(
      'GET',
      `/conversations/${encodeURIComponent(ids.web!)}`,
      undefined,
      'alice',
    );
    expect(web.status).toBe(400);
  });

  it('denies a mission run with a reason, and refuses what is not the person’s or is malformed', async () => {
    const alice = await inbox('alice');
    const run = alice.items.find((i) => i.workflowId === ids.run)!;
    const question = alice.items.find((i) => i.kind === 'question')!;
    // Eve may not decide Alice's gates: refused, nothing happens.
    const eve = await stack.web.request(
      'POST',
      '/inbox/decisions',
      { items: [{ workflowId: run.workflowId, gateId: run.gateId }], choice: 'approve' },
      'eve',
    );
    expect(eve.body.outcomes[0]).toMatchObject({ ok: false, error: 'no longer waiting on you' });
    // Questions are answered with their form, not approved in bulk.
    const asked = await stack.web.request(
      'POST',
      '/inbox/decisions',
      { items: [{ workflowId: question.workflowId, gateId: question.gateId }], choice: 'approve' },
      'alice',
    );
    expect(asked.body.outcomes[0]).toMatchObject({
      ok: false,
      error: 'a question is answered (its form), not decided',
    });
    for (const [body, error] of [
      [{ items: [], choice: 'approve' }, 'items: choose at least one decision'],
      [
        { items: [{ workflowId: 'user:alice', gateId: 'g' }], choice: 'approve' },
        'items.0.workflowId: not a conversation or mission run',
      ],
      [{ items: [{ workflowId: ids.web, gateId: 'g' }], choice: 'always' }, 'choice'],
    ] as const) {
      const refused = await stack.web.request('POST', '/inbox/decisions', body, 'alice');
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain(error);
    }

    const denied = await stack.web.request(
      'POST',
      '/inbox/decisions',
      { items: [{ workflowId: run.workflowId, gateId: run.gateId }], choice: 'deny', reason: 'not tonight' },
      'alice',
    );
    expect(denied.body.outcomes[0]).toMatchObject({ ok: true });
    const owner = await stack.web.waitFor(
      'inbox-owner',
      (v) =>
        v.transcript.some(
          (m) => m.role === 'assistant' && /nightly/.test(m.text) && /not tonight|denied/i.test(m.text),
        ),
      'the mission told its owner of the denial',
    );
    expect(JSON.stringify(owner.transcript)).not.toContain('from-mission\\n');
    expect((await inbox('alice')).items.map((i) => i.workflowId)).toEqual(['session:web:inbox-question']);
  });

  it('answers a question and edits & approves a call from the inbox, refusing what does not fit', async () => {
    const question = (await inbox('alice')).items.find((i) => i.kind === 'question')!;
    const answers = [{ question: 'Environment', selected: ['production'] }];
    const answer = (user: string, body: unknown) => stack.web.request('POST', '/inbox/answers', body, user);
    const target = { workflowId: question.workflowId, gateId: question.gateId };
    // Not Eve's to answer, malformed bodies, and an approval is not a question.
    expect((await answer('eve', { ...target, answers })).body.outcome).toMatchObject({
      ok: false,
      error: 'no longer waiting on you',
    });
    for (const [body, error] of [
      [{ ...target, answers: 'production' }, 'answers'],
      [{ ...target, answers, extra: 1 }, 'extra'],
      [{ workflowId: 'user:alice', gateId: 'g', answers }, 'not a conversation or mission run'],
    ] as const) {
      const refused = await answer('alice', body);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain(error);
    }
    await stack.web.say('inbox-edit', 'run `echo before-edit`');
    const gate = await stack.web.pendingGate('inbox-edit');
    const call = { workflowId: 'session:web:inbox-edit', gateId: gate.id };
    expect((await answer('alice', { ...call, answers })).body.outcome).toMatchObject({
      ok: false,
      error: 'this is not a question',
    });

    // Answered from the inbox: the conversation goes on with the answer, as from its own form.
    expect((await answer('alice', { ...target, answers })).body.outcome).toMatchObject({ ok: true });
    await stack.web.waitFor(
      'inbox-question',
      (v) =>
        v.status === 'idle' &&
        v.transcript.some((m) => m.role === 'tool' && m.content.includes('production')),
      'the answer to reach the conversation',
    );

    // Edit & approve: one decision at a time, with the arguments that will run.
    const edit = (body: unknown) => stack.web.request('POST', '/inbox/decisions', body, 'alice');
    const two = await edit({ items: [call, target], choice: 'edit', args: { command: 'echo x' } });
    expect(two.status).toBe(400);
    expect(two.body.error).toContain('one decision at a time');
    expect((await edit({ items: [call], choice: 'edit' })).status).toBe(400);
    const edited = await edit({ items: [call], choice: 'edit', args: { command: 'echo after-edit' } });
    expect(edited.body.outcomes[0]).toMatchObject({ ok: true });
    const [result] = await until('the edited call to run', async () => {
      const results = await toolResults(call.workflowId);
      return results.length ? results : undefined;
    });
    expect(result).toMatchObject({ status: 'ok' });
    expect((result as { content: string }).content).toContain('after-edit');
    expect((result as { content: string }).content).not.toContain('before-edit');
    expect((await inbox('alice')).items).toEqual([]);
  });

  it('pushes the list to an open tab when a gate opens, and when it is decided outside this gateway', async () => {
    const events = await inboxStream('alice');
    try {
      expect((await events.next()).items).toEqual([]);
      await stack.web.say('inbox-push', 'run `echo pushed`');
      const opened = await events.next();
      expect(opened.items.map((i) => i.asks)).toEqual(['Run shell_execute: echo pushed']);
      // Decided by a signal straight to Temporal (as another gateway or a Slack click would): the feed tells.
      await sealingClient(env.client, TEST_GATEWAY_KEY)
        .workflow.getHandle('session:web:inbox-push')
        .signal(decideSignal, { gateId: opened.items[0]!.gateId, choice: 'approve', userId: 'alice' });
      expect((await events.next()).items).toEqual([]);
    } finally {
      events.close();
    }
    // A stranger's stream says nothing of others' decisions.
    const eve = await inboxStream('eve');
    expect((await eve.next()).items).toEqual([]);
    eve.close();
  });
});

describe('archiving a conversation', () => {
  const listed = async (user: string) =>
    (
      (await stack.web.request('GET', '/sessions', undefined, user)).body.sessions as {
        sessionId: string;
        archived?: boolean;
      }[]
    ).find((s) => s.sessionId === 'archive-me');

  it('moves it to Archived for its owner only; it still answers; anyone else is refused', async () => {
    await stack.web.say('archive-me', 'hello');
    await stack.web.answered('archive-me');
    await until('the conversation listed', () => listed('alice'));
    const archive = (user: string, body: unknown) =>
      stack.web.request('POST', '/sessions/archive-me/archive', body, user);

    expect((await archive('alice', { archived: 'yes' })).status).toBe(400);
    expect((await archive('alice', { archived: true, extra: 1 })).status).toBe(400);
    expect((await archive('eve', { archived: true })).status).toBe(404); // not hers: as if it did not exist
    // Bob may act in it (an approver), but it is not his to archive: the workflow refuses and tells him.
    expect((await archive('bob', { archived: true })).status).toBe(202);
    await stack.web.waitFor(
      'archive-me',
      (v) =>
        v.notices.some((n) => n.text === 'Only the person who started this conversation may archive it.'),
      'the refusal told to Bob',
      60_000,
      'bob',
    );
    expect((await listed('alice'))?.archived).toBeUndefined();

    expect((await archive('alice', { archived: true })).status).toBe(202);
    await until('the list to say archived', async () => (await listed('alice'))?.archived === true);
    // Archived is a place in the list, not an end: a message is still answered.
    await stack.web.say('archive-me', 'still there?');
    await stack.web.waitFor(
      'archive-me',
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'assistant').length >= 2,
      'the answer in an archived conversation',
    );
    expect((await archive('alice', { archived: false })).status).toBe(202);
    await until('the list to bring it back', async () => (await listed('alice'))?.archived === undefined);
  });
});

/** `GET /api/inbox/stream` as the page's EventSource reads it: each `inbox` event's list, in order. */
async function inboxStream(user: string) {
  const abort = new AbortController();
  const response = await fetch(`${stack.web.baseUrl}/api/inbox/stream`, {
    headers: stack.web.headers(user),
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  return {
    async next(): Promise<{ items: InboxItem[]; unreadable: number }> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${user}'s next inbox event did not come`)), 60_000);
      });
      const read = (async () => {
        for (;;) {
          const end = buffered.indexOf('\n\n');
          if (end >= 0) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            const data = /^data: (.*)$/m.exec(event)?.[1];
            if (/^event: inbox$/m.test(event) && data) return JSON.parse(data);
            continue;
          }
          const { value, done } = await reader.read();
          if (done) throw new Error('the inbox stream ended');
          buffered += value;
        }
      })();
      try {
        return await Promise.race([read, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => abort.abort(),
  };
}

describe('attacks on "Needs you"', () => {
  it('lets nobody read, decide or hand over what is not theirs, refuses forged cursors, and stops a flood', async () => {
    const tally = new Tally();
    await stack.web.say('inbox-target', 'run `echo only-alice-decides`');
    const waiting = await stack.web.waitFor(
      'inbox-target',
      (v) => v.gates.some((g) => g.status === 'pending'),
      "alice's approval",
    );
    const gate = waiting.gates.find((g) => g.status === 'pending')!;
    const target = { workflowId: 'session:web:inbox-target', gateId: gate.id };
    await until('listed for alice', async () =>
      (await inbox('alice')).items.some((i) => i.gateId === gate.id),
    );

    // Reading: mallory's inbox never holds alice's decision, under any of the ways she might ask.
    for (const path of ['/inbox', '/inbox?order=oldest', '/inbox?user=alice', '/inbox?ids=alice']) {
      const read = await stack.web.request('GET', path, undefined, 'mallory');
      tally.attempt(
        !JSON.stringify(read.body ?? {}).includes(gate.id),
        () => `${path} showed mallory alice's decision`,
      );
    }
    // Deciding: every choice on alice's gate is refused, and nothing is signalled.
    for (const body of [
      { items: [target], choice: 'approve' },
      { items: [target], choice: 'deny', reason: 'mine now' },
      { items: [target], choice: 'edit', args: { command: 'echo owned' } },
      { items: [target], choice: 'delegate', to: 'mallory' },
    ]) {
      const decided = await stack.web.request('POST', '/inbox/decisions', body, 'mallory');
      tally.attempt(
        decided.status >= 400 || decided.body?.outcomes?.every((o: { ok: boolean }) => !o.ok),
        () => `${body.choice} by mallory: ${JSON.stringify(decided.body)}`,
      );
    }
    // Forged cursors: refused with a reason, never a page of someone else's.
    for (const cursor of ['x', 'bm90LWEtdG9rZW4', Buffer.from('{"alice":1}').toString('base64url')]) {
      const forged = await stack.web.request('GET', `/inbox?cursor=${cursor}`, undefined, 'mallory');
      tally.attempt(
        forged.status === 400 && !JSON.stringify(forged.body).includes(gate.id),
        () => `cursor ${cursor}: ${forged.status} ${JSON.stringify(forged.body)}`,
      );
    }
    const still = await view('session:web:inbox-target');
    tally.check(still.gates.find((g) => g.id === gate.id)?.status === 'pending', () => 'the gate changed');

    // A flood: past 120 requests a minute a person is refused with when to try again; others read on.
    const flood = await Promise.all(
      Array.from({ length: 140 }, () => stack.web.request('GET', '/inbox', undefined, 'mallory')),
    );
    const refused = flood.filter((r) => r.status === 429);
    // Each request past the 120 a minute is one attempt: refused, or it got through.
    for (let extra = 0; extra < 140 - 120; extra++)
      tally.attempt(extra < refused.length, () => `${140 - refused.length} of 140 reads got through`);
    for (const r of refused)
      tally.check(/^too many inbox reads: try again in \d+ s$/.test(r.body?.error), () => r.body?.error);
    tally.check(
      (await inbox('alice')).items.some((i) => i.gateId === gate.id),
      () => "alice's inbox was refused too",
    );
    tally.finish('"Needs you": nobody reads, decides or floods what is not theirs');
    await stack.web.decide('inbox-target', gate.id, 'deny', {}, 'alice');
  });
});

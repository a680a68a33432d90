/**
 * Who may approve, attacked through every channel: a requester approving their own call under four-eyes
 * (`selfApprove: false`) in the web chat, Slack and Discord; one person approving twice to make a quorum of
 * two; a crafted allow-always on a quorum gate. Real worker and gateway processes, a real Temporal server,
 * Slack and Discord requests signed as the platforms sign them. Every attempt is a scoreboard run.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCustomId } from '../../platforms/discord/ids';
import {
  stateQuery,
  type ApprovalGate,
  type SessionView,
  type ToolResultStatus,
} from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { DiscordKeys, DiscordRequests, snowflake } from '../helpers/discord-requests';
import { FakeDiscord, type DiscordMessage } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { click, mention, SlackRequests } from '../helpers/slack-requests';
import { TestSession } from '../helpers/session';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until as untilDone } from '../helpers/until';

const SLACK_SECRET = 'slack-signing-secret-for-approvals';
const D_REQUESTER = '100000000000000011';
const D_FIRST = '100000000000000012';
const D_SECOND = '100000000000000013';

let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let discord: FakeDiscord;
let stack: Stack;
let slackRequests: SlackRequests;
let discordRequests: DiscordRequests;
const tally = new Tally();
const attempt = (refused: boolean, what: () => string) => tally.attempt(refused, what);

beforeAll(async () => {
  env = await startTestTemporal();
  slack = await new FakeSlack().start();
  discord = await new FakeDiscord().start();
  const keys = new DiscordKeys();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      reminderAfter: 'never',
      tools: {
        // Four-eyes and a quorum of two: the requester may only deny; two other people must approve.
        shell_execute: {
          selfApprove: false,
          approvals: 2,
          approvers: ['bob', 'carol', 'U3', 'U4', D_FIRST, D_SECOND],
        },
      },
    },
    env: {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SLACK_SECRET,
      SLACK_API_URL: `${slack.url}/api/`,
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: keys.publicKeyHex,
      DISCORD_API_URL: discord.url,
    },
  });
  slackRequests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SLACK_SECRET);
  discordRequests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('approvals: self-approval and quorum');
  } finally {
    await stack?.stop();
    await slack?.stop();
    await discord?.stop();
    await env?.teardown();
  }
});

const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>) =>
  untilDone(what, probe, { timeoutMs: 30_000 });

const stateOf = (workflowId: string) =>
  env.client.workflow.getHandle(workflowId).query(stateQuery) as Promise<SessionView>;
const approvalGate = (view: SessionView) => view.gates.find((g): g is ApprovalGate => g.kind === 'approval');
const toolStatus = (view: SessionView): ToolResultStatus | undefined =>
  view.transcript.flatMap((m) => (m.role === 'tool' ? [m.status] : []))[0];
/** The attempt changed nothing: the gate is still open with exactly these approvers counted. */
const unchanged = (view: SessionView, approvers: string[]) => {
  const gate = approvalGate(view);
  return (
    gate?.status === 'pending' &&
    JSON.stringify((gate.approvals ?? []).map((a) => a.by)) === JSON.stringify(approvers) &&
    view.grants.length === 0 &&
    toolStatus(view) === undefined
  );
};

describe('four-eyes and quorum approvals', () => {
  it('needs two different people in a web session: self-approval, a double click and a crafted allow-always change nothing', async () => {
    const session = new TestSession(env.client, stack.env.TEMPORAL_TASK_QUEUE!);
    const noticeTo = (user: string, fragment: string) =>
      session.waitFor(
        (v) => v.notices.some((n) => n.to === user && n.text.includes(fragment)),
        `a notice to ${user}: ${fragment}`,
      );
    await session.say('run `echo quorum-web`', 'alice');
    const [gate] = await session.pendingGate();
    expect(gate).toMatchObject({ approvalsNeeded: 2, selfApprove: false, approvals: [] });

    await session.decide({ gateId: gate!.id, choice: 'approve', userId: 'alice' });
    let view = await noticeTo('alice', 'someone else must approve');
    attempt(unchanged(view, []), () => `web: alice approved her own call: ${JSON.stringify(view.gates)}`);

    // A typed "approve" from the requester is the same decision, refused the same way.
    await session.say('approve', 'alice');
    view = await session.waitFor(
      (v) => v.notices.filter((n) => n.to === 'alice' && n.text.includes('someone else')).length === 2,
      'the typed self-approval refused',
    );
    attempt(unchanged(view, []), () => `web: alice's typed approve counted: ${JSON.stringify(view.gates)}`);

    await session.decide({ gateId: gate!.id, choice: 'approve', userId: 'bob' });
    view = await noticeTo('bob', 'counted: 1 of 2 approvals: @bob');
    expect(unchanged(view, ['bob'])).toBe(true);

    await session.decide({ gateId: gate!.id, choice: 'approve', userId: 'bob' });
    view = await noticeTo('bob', 'You already approved');
    attempt(
      unchanged(view, ['bob']),
      () => `web: bob's second approval counted: ${JSON.stringify(view.gates)}`,
    );

    await session.decide({ gateId: gate!.id, choice: 'always', scope: 'user', userId: 'bob' });
    view = await noticeTo('bob', 'Always allow is not available');
    attempt(
      unchanged(view, ['bob']),
      () => `web: a crafted allow-always went through: ${JSON.stringify(view)}`,
    );

    await session.decide({ gateId: gate!.id, choice: 'approve', userId: 'carol' });
    view = await session.idle();
    expect(approvalGate(view)!.resolution).toMatchObject({ outcome: 'approved', by: 'carol' });
    expect(approvalGate(view)!.approvals!.map((a) => a.by)).toEqual(['bob', 'carol']);
    expect(view.notices.some((n) => n.text.includes('approved by @bob and @carol'))).toBe(true);
    expect(toolStatus(view)).toBe('ok');
  });

  it('ends a quorum on one deny, and the requester may still deny their own call', async () => {
    const session = new TestSession(env.client, stack.env.TEMPORAL_TASK_QUEUE!);
    await session.say('run `echo never-runs`', 'alice');
    const [gate] = await session.pendingGate();
    await session.decide({ gateId: gate!.id, choice: 'approve', userId: 'bob' });
    await session.waitFor((v) => approvalGate(v)?.approvals?.length === 1, 'the first approval');
    await session.decide({ gateId: gate!.id, choice: 'deny', reason: 'wrong box', userId: 'alice' });
    const view = await session.idle();
    expect(approvalGate(view)!.resolution).toMatchObject({ outcome: 'denied', by: 'alice' });
    expect(toolStatus(view)).toBe('denied');
  });

  it('refuses self-approval through the web gateway', async () => {
    const sessionId = randomUUID();
    expect((await stack.web.say(sessionId, 'run `echo web-gateway`', 'alice')).status).toBeLessThan(300);
    const gate = await stack.web.pendingGate(sessionId);
    await stack.web.decide(sessionId, gate.id, 'approve', {}, 'alice');
    const view = await stack.web.waitFor(
      sessionId,
      (v) => v.notices.some((n) => n.text.includes('someone else must approve')),
      'the refusal',
    );
    attempt(
      unchanged(view, []),
      () => `web gateway: alice approved her own call: ${JSON.stringify(view.gates)}`,
    );
  });

  it('refuses self-approval in Slack (button and typed reply), shows "1 of 2 approvals" on the prompt, and counts a double click once', async () => {
    const event = mention('run `echo quorum-slack`');
    await slackRequests.event(event);
    const workflowId = `session:slack:T1:C1:${event.ts}`;
    const prompt = await until('the prompt', () =>
      slack.of('chat.postMessage').find((m) => m.thread_ts === event.ts && Array.isArray(m.blocks)),
    );
    const text = JSON.stringify(prompt.blocks);
    expect(text).toContain('Needs 2 approvals from different people among');
    expect(text).not.toContain('gate_always');
    expect(text).not.toContain('gate_edit');
    const buttons = (
      prompt.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]
    ).find((b) => b.type === 'actions')!.elements!;
    const approve = buttons.find((b) => b.action_id === 'gate_approve')!.value;
    const ephemeralTo = (user: string, fragment: string, count = 1) =>
      until(
        `an ephemeral to ${user}: ${fragment}`,
        () =>
          slack.of('chat.postEphemeral').filter((e) => e.user === user && String(e.text).includes(fragment))
            .length >= count || undefined,
      );

    await slackRequests.interaction(click('gate_approve', approve, 'U1', `${slack.url}/response/a1`));
    await ephemeralTo('U1', 'someone else must approve');
    let view = await stateOf(workflowId);
    attempt(unchanged(view, []), () => `slack: U1 approved their own call: ${JSON.stringify(view.gates)}`);

    await slackRequests.event({
      type: 'message',
      channel_type: 'channel',
      user: 'U1',
      text: 'approve',
      ts: '1700000777.000001',
      thread_ts: event.ts,
      channel: 'C1',
    });
    await ephemeralTo('U1', 'someone else must approve', 2);
    view = await stateOf(workflowId);
    attempt(unchanged(view, []), () => `slack: U1's typed approve counted: ${JSON.stringify(view.gates)}`);

    await slackRequests.interaction(click('gate_approve', approve, 'U3', `${slack.url}/response/a2`));
    await until('the prompt edited with the count', () =>
      slack.of('chat.update').find((u) => JSON.stringify(u.blocks).includes('1 of 2 approvals: <@U3>')),
    );
    await slackRequests.interaction(click('gate_approve', approve, 'U3', `${slack.url}/response/a3`));
    await ephemeralTo('U3', 'You already approved');
    view = await stateOf(workflowId);
    attempt(
      unchanged(view, ['U3']),
      () => `slack: U3's second approval counted: ${JSON.stringify(view.gates)}`,
    );

    // The button is not offered; a crafted one (a real button's value, another action) is refused.
    const crafted = approve.replace('"approve"', '"always"');
    await slackRequests.interaction(click('gate_always_user', crafted, 'U3', `${slack.url}/response/a4`));
    await ephemeralTo('U3', 'Always allow is not available');
    view = await stateOf(workflowId);
    attempt(
      unchanged(view, ['U3']),
      () => `slack: a crafted allow-always went through: ${JSON.stringify(view)}`,
    );

    await slackRequests.interaction(click('gate_approve', approve, 'U4', `${slack.url}/response/a5`));
    await until('the prompt edited with both approvers', () =>
      slack.of('chat.update').find((u) => String(u.text).includes('approved by <@U3> and <@U4>')),
    );
  });

  it('refuses self-approval in Discord with an ephemeral reply, and edits the prompt after each approval', async () => {
    const channelId = snowflake();
    expect((await discordRequests.ask(channelId, D_REQUESTER, 'run `echo quorum-discord`')).json.type).toBe(
      4,
    );
    const posted = await until('the prompt', () =>
      discord.postedIn(channelId).find((m) => m.components.length > 0),
    );
    const message: DiscordMessage = structuredClone(posted);
    const labels = (message.components as { components: { label?: string }[] }[]).flatMap((row) =>
      row.components.map((c) => c.label),
    );
    expect(labels).toEqual(['Approve', 'Deny…']);
    expect(message.content).toContain('Needs 2 approvals from different people');
    const workflowId = `session:discord:${channelId}`;
    const gateId = approvalGate(await stateOf(workflowId))!.id;
    const approve = encodeCustomId({ action: 'approve', channelId, gateId });

    const self = await discordRequests.click(channelId, D_REQUESTER, approve);
    let view = await stateOf(workflowId);
    attempt(
      /someone else must approve/.test(String(self.json.data?.content)) && unchanged(view, []),
      () => `discord: the requester approved their own call: ${self.text} ${JSON.stringify(view.gates)}`,
    );

    const first = await discordRequests.click(channelId, D_FIRST, approve);
    expect(String(first.json.data?.content)).toContain('counted: 1 of 2 approvals');
    await until('the prompt edited with the count', () =>
      discord.messages.get(message.id)!.content.includes(`1 of 2 approvals: <@${D_FIRST}>`),
    );
    const again = await discordRequests.click(channelId, D_FIRST, approve);
    view = await stateOf(workflowId);
    attempt(
      /already approved/.test(String(again.json.data?.content)) && unchanged(view, [D_FIRST]),
      () => `discord: a second approval by one person counted: ${again.text} ${JSON.stringify(view.gates)}`,
    );

    const crafted = await discordRequests.click(
      channelId,
      D_FIRST,
      encodeCustomId({ action: 'alwaysEverywhere', channelId, gateId }),
    );
    view = await stateOf(workflowId);
    attempt(
      /Always allow is not available/.test(String(crafted.json.data?.content)) && unchanged(view, [D_FIRST]),
      () => `discord: a crafted allow-always went through: ${crafted.text} ${JSON.stringify(view)}`,
    );

    await discordRequests.click(channelId, D_SECOND, approve);
    await until('the prompt decided', () => {
      const edited = discord.messages.get(message.id)!;
      return edited.components.length === 0 && edited.content.includes('approved by');
    });
  });
});

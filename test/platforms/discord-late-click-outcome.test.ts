/**
 * The Discord gateway's watches for clicks judged after their reply (the end-to-end path, a refusal reaching
 * the clicker as an ephemeral follow-up, is in test/e2e/discord.test.ts): one watch per person and gate, a
 * bound on how many run during an outage, and all of them ending with the gateway.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../infra/log';
import { Sessions } from '../../gateways/sessions';
import { LateClickOutcome, type UnjudgedClick } from '../../platforms/discord/late-click-outcome';
import { discordRest } from '../../platforms/discord/rest';
import { snowflake } from '../helpers/discord-requests';
import { FakeDiscord } from '../helpers/fake-discord';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let discord: FakeDiscord;
beforeAll(async () => {
  env = await startTestTemporal();
  discord = await new FakeDiscord().start();
});
afterAll(async () => {
  await discord?.stop();
  await env?.teardown();
});

// No worker serves this queue: every look at the workflow finds nobody answering, as during an outage.
const feedback = () =>
  new LateClickOutcome({
    rest: discordRest({ botToken: 'discord-bot-token-for-tests', apiUrl: discord.url }),
    sessions: new Sessions(env.client, 'nobody-serves-this', 'discord', 200),
    log: createLogger('test', 'error'),
    maxWatches: 2,
  });
const click = (gateId: string, userId = '100000000000000001'): UnjudgedClick => ({
  applicationId: '1000000000000000001',
  token: `token-${snowflake()}`,
  workflowId: 'session:discord:1300000000000000002',
  gateId,
  userId,
  since: Date.now(),
});

describe('Discord late feedback', () => {
  it('keeps one watch per person and gate, bounds how many run, and ends them all on shutdown', () => {
    const late = feedback();
    expect(late.watch(click('g1'))).toBe(true);
    expect(late.watch(click('g1'))).toBe(true); // a second click on the same gate replaces the first watch
    expect(late.watching).toBe(1);
    expect(late.watch(click('g1', '100000000000000002'))).toBe(true);
    expect(late.watching).toBe(2);
    // Full: the click still counts (it was signalled); only the private follow-up is not promised.
    expect(late.watch(click('g2'))).toBe(false);
    expect(late.watching).toBe(2);
    late.stop();
    expect(late.watching).toBe(0);
    expect(late.watch(click('g2'))).toBe(true);
    late.stop();
    expect(discord.followUps).toEqual([]);
  });
});

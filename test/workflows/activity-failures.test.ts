/**
 * One failing activity never fails a whole session: a policy check, a grant write, the settings or a delivery
 * that fails after its retries becomes a message in the conversation, and the next message is answered.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../activities';
import type { AppConfig } from '../../infra/config';
import { userWorkflowId } from '../../common/ids';
import { SqliteVault } from '../../infra/credentials/sqlite-vault';
import { missionDirectoryId, missionWorkflowId } from '../../common/missions/types';
import { missionViewQuery } from '../../workflows/missions/contract';
import { missionRecordsOf } from '../helpers/missions';
import {
  stateQuery,
  userMessageSignal,
  type CredentialGate,
  type SessionInput,
} from '../../workflows/session/contract';
import { workflowCode } from '../../workers/workflow-code';
import { TEST_GATEWAY_KEY, testConfig } from '../helpers/config';
import { sealingClient } from '../../infra/temporal/sealing-interceptor';
import { FakeOpenAi } from '../helpers/fake-openai';
import { FAKE_CHANNEL, FakeDiscord } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { lastAnswer, TestSession, toolResults } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

type Activities = ReturnType<typeof createActivities>;

let env: TestWorkflowEnvironment;
/** Messages sent as a gateway sends them (sealed). */
let gateway: Client;

beforeAll(async () => {
  env = await startTestTemporal();
  gateway = sealingClient(env.client, TEST_GATEWAY_KEY);
});

afterAll(async () => {
  await env?.teardown();
});

/** A real worker whose named activities fail the way they do after their retries (a fake that fails). */
async function withWorkerWhere(
  failing: Partial<Activities> | ((real: Activities) => Partial<Activities>),
  body: (taskQueue: string, config: AppConfig) => Promise<void>,
  extraEnv: Record<string, string> = {},
  policy: Record<string, unknown> = {},
): Promise<void> {
  const config = testConfig(policy, extraEnv);
  const taskQueue = `test-${randomUUID()}`;
  const real = createActivities({
    config: { ...config, temporal: { ...config.temporal, taskQueue } },
    client: env.client,
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    ...workflowCode(inject('workflowBundlePath')),
    activities: { ...real, ...(typeof failing === 'function' ? failing(real) : failing) },
  });
  await worker.runUntil(body(taskQueue, config));
}

const refused = (message: string, type: string) => async (): Promise<never> => {
  throw ApplicationFailure.nonRetryable(message, type);
};

describe('a failing activity', () => {
  it('turns a failed policy check into the call result, and answers the next message', async () => {
    await withWorkerWhere(
      { planToolCall: refused('the policy store is unreachable', 'PolicyUnavailable') },
      async (taskQueue) => {
        const session = new TestSession(env.client, taskQueue);
        await session.say('run `echo hi`');
        const view = await session.idle();
        const [result] = toolResults(view);
        expect(result).toMatchObject({ name: 'shell_execute', status: 'failed' });
        expect(result!.content).toBe(
          'not run: the policy check failed (the policy store is unreachable), so nobody could be asked to approve it.',
        );
        expect(view.gates).toHaveLength(0);

        await session.say('hello again');
        const next = await session.waitFor(
          (v) => v.status === 'idle' && lastAnswer(v).includes('You said: "hello again"'),
          'the next answer',
        );
        expect(toolResults(next)).toHaveLength(1);
        expect((await session.handle.describe()).status.name).toBe('RUNNING');
      },
    );
  });

  it('tells a standing approval the user directory refused, runs the approved call, and asks next time', async () => {
    await withWorkerWhere({}, async (taskQueue) => {
      // A directory at its limit of 500 grants refuses one more: a real rejected write. Its own user, so no
      // other test reads this directory once its worker is gone.
      const user = `dana-${randomUUID().slice(0, 8)}`;
      const full = Array.from({ length: 500 }, (_, i) => ({
        id: `g${i}`,
        userId: user,
        toolName: 'http_request',
        pattern: `https://example.com/${i}`,
        scope: 'user' as const,
        createdAt: Date.now(),
      }));
      await env.client.workflow.start('userDirectoryWorkflow', {
        workflowId: userWorkflowId(user),
        taskQueue,
        args: [{ userId: user, grants: full }],
      });
      const session = new TestSession(env.client, taskQueue);
      await session.say('run `echo always`', user);
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'always', scope: 'user', userId: user });
      const view = await session.idle();
      expect(toolResults(view)[0]).toMatchObject({ status: 'ok' });
      expect(toolResults(view)[0]!.content).toContain('always');
      const note = view.transcript.find((m) => m.role === 'assistant' && m.text.startsWith('⚠️'));
      expect(note?.role === 'assistant' && note.text).toBe(
        `⚠️ @${user}'s standing approval for shell_execute could not be saved (the user directory refused it: at most 500 grants per user: revoke some first): this call runs as approved, and the next one will be asked about again.`,
      );

      await session.say('run `echo again`', user);
      const [next] = await session.pendingGate();
      expect(next).toMatchObject({ toolName: 'shell_execute', args: { command: 'echo again' } });
      await env.client.workflow.getHandle(userWorkflowId(user)).terminate();
    });
  });

  it('goes on with the settings it had when they cannot be loaded, and says so', async () => {
    await withWorkerWhere(
      {
        // The run's opening could not read them either (it then leaves them out), and the turn's own read fails.
        loadRunOpening: async () => await Promise.resolve({ previousTranscript: [] }),
        loadSettings: refused('the policy file cannot be read', 'SettingsUnavailable'),
      },
      async (taskQueue) => {
        const session = new TestSession(env.client, taskQueue);
        await session.say('what time is it');
        const view = await session.idle();
        const notes = view.transcript.filter((m) => m.role === 'assistant' && m.synthetic);
        expect(notes.map((m) => m.role === 'assistant' && m.text)).toEqual([
          '⚠️ I could not load my settings (the policy file cannot be read), so this turn goes on with the ones I had.',
        ]);
        expect(toolResults(view)[0]).toMatchObject({ name: 'current_time', status: 'ok' });
        expect(lastAnswer(view)).toContain('current_time');
        expect((await session.handle.describe()).status.name).toBe('RUNNING');
      },
    );
  });

  it('tells a tool server whose discovery failed like one that is down, and answers', async () => {
    await withWorkerWhere(
      { discoverMcpTools: refused('the MCP pool is broken', 'DiscoveryFailed') },
      async (taskQueue) => {
        const session = new TestSession(env.client, taskQueue);
        await session.say('what time is it');
        const view = await session.idle();
        expect(view.notices.map((n) => n.text)).toContain(
          'The "notes" tool server is unavailable (looking up its tools failed: the MCP pool is broken); its tools are left out, everything else works.',
        );
        expect(toolResults(view)[0]).toMatchObject({ name: 'current_time', status: 'ok' });
      },
      {},
      { mcpServers: { notes: { command: 'node', args: ['-e', ''] } } },
    );
  });

  it("pauses a mission whose next run time cannot be computed, and tells its owner's conversation", async () => {
    await withWorkerWhere(
      { nextFireTime: refused('the time zone database is missing', 'ScheduleUnavailable') },
      async (taskQueue) => {
        const session = new TestSession(env.client, taskQueue);
        await session.say(
          'call mission_create {"name": "nightly", "goal": "what time is it", "cadence": "0 3 * * *"}',
        );
        const told = await session.waitFor(
          (v) =>
            v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('**nightly** is paused')),
          "the owner's notice",
        );
        const note = told.transcript.find((m) => m.role === 'assistant' && m.text.startsWith('**nightly**'));
        expect(note?.role === 'assistant' && note.text).toBe(
          '**nightly** is paused: its next run time could not be computed (the time zone database is missing). mission_resume "nightly" tries again.',
        );
        const records = await missionRecordsOf(env.client.workflow, 'alice');
        const id = records.find((r) => r.name === 'nightly')!.id;
        const mission = env.client.workflow.getHandle(missionWorkflowId(id));
        expect(await mission.query(missionViewQuery)).toMatchObject({
          status: 'paused',
          reason: 'paused: its next run time could not be computed (the time zone database is missing)',
        });
        expect((await mission.describe()).status.name).toBe('RUNNING');
        await mission.terminate();
        await env.client.workflow.getHandle(missionDirectoryId('alice')).terminate();
      },
    );
  });

  it('posts in a Slack thread what could not be posted there, once posting works again', async () => {
    const slack = await new FakeSlack().start();
    let refusals = 0;
    try {
      await withWorkerWhere(
        (real) => ({
          // Slack refuses the first answer after every retry; later deliveries go through.
          deliver: async (request) => {
            if (request.event.type === 'message' && refusals++ === 0)
              throw ApplicationFailure.nonRetryable('Slack answered 503 on every try', 'SlackDown');
            return await real.deliver(request);
          },
        }),
        async (taskQueue) => {
          const workflowId = `session:slack:T1:C1:${Date.now()}.000200`;
          const input: SessionInput = { sessionId: workflowId, channel: 'slack', ownerId: 'U1' };
          const say = (text: string) =>
            gateway.workflow.signalWithStart('sessionWorkflow', {
              workflowId,
              taskQueue,
              args: [input],
              signal: userMessageSignal,
              signalArgs: [{ messageId: randomUUID(), userId: 'U1', text }],
            });
          await say('first question');
          await until(
            'the first answer to be refused',
            () => refusals > 0 && slack.of('chat.postMessage').length === 0,
          );
          await say('second question');
          const posted = await until('two posts', () => {
            const texts = slack.of('chat.postMessage').map((body) => String(body.text));
            return texts.length >= 2 ? texts : undefined;
          });
          expect(posted[0]).toContain('second question');
          expect(posted[1]).toMatch(
            /^⚠️ This could not be posted here earlier \(Slack answered 503 on every try\):/,
          );
          expect(posted[1]).toContain('first question');
          const handle = env.client.workflow.getHandle(workflowId);
          expect((await handle.describe()).status.name).toBe('RUNNING');
          await handle.terminate();
        },
        { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_API_URL: `${slack.url}/api/` },
      );
    } finally {
      await slack.stop();
    }
  });
});

describe('a long answer in a Slack thread', () => {
  it('goes on from the part that failed: no part is posted twice', async () => {
    const slack = await new FakeSlack().start();
    // Four sections of Slack's 3,000 characters, each line saying which it is.
    const answer = [1, 2, 3, 4].map((n) => `section ${n} `.padEnd(2_900, String(n))).join('\n');
    // Streamed (a few ms between pieces): the answer is first written into one message, which its part 1 replaces.
    const model = await new FakeOpenAi(() => ({ text: answer }), { streamGapMs: 4 }).start();
    try {
      await withWorkerWhere(
        {},
        async (taskQueue) => {
          // The third post is refused once: after the message being written and part 2 are in the thread.
          slack.failCall('chat.postMessage', 3);
          const workflowId = `session:slack:T1:C1:${Date.now()}.000100`;
          const input: SessionInput = { sessionId: workflowId, channel: 'slack', ownerId: 'U1' };
          await gateway.workflow.signalWithStart('sessionWorkflow', {
            workflowId,
            taskQueue,
            args: [input],
            signal: userMessageSignal,
            signalArgs: [{ messageId: randomUUID(), userId: 'U1', text: 'tell me everything' }],
          });
          await until('four posts', () => slack.of('chat.postMessage').length >= 4, {
            context: () => JSON.stringify(slack.calls.map((c) => c.method)),
            timeoutMs: 90_000,
          });
          const posted = slack.of('chat.postMessage').map((body) => String(body.text));
          expect(posted[0]).toMatch(/ …$/);
          const replaced = slack
            .of('chat.update')
            .map((body) => String(body.text))
            .filter((text) => /part 1 of 4/.test(text));
          expect(replaced).toHaveLength(1);
          const parts = [...replaced, ...posted.slice(1)];
          expect(parts.map((text) => /part (\d) of (\d)/.exec(text)?.slice(1).join('/'))).toEqual([
            '1/4',
            '2/4',
            '3/4',
            '4/4',
          ]);
          expect(parts.map((text) => text.slice(0, 9))).toEqual([
            'section 1',
            'section 2',
            'section 3',
            'section 4',
          ]);
          const view = await env.client.workflow.getHandle(workflowId).query(stateQuery);
          expect(view.status).toBe('idle');
          await env.client.workflow.getHandle(workflowId).terminate();
        },
        {
          MODEL_PROVIDER: 'openai',
          OPENAI_BASE_URL: model.url,
          OPENAI_API_KEY: 'k',
          SLACK_BOT_TOKEN: 'xoxb-test',
          SLACK_API_URL: `${slack.url}/api/`,
        },
      );
    } finally {
      await model.stop();
      await slack.stop();
    }
  });
});

describe('a long answer in a Discord channel', () => {
  it('goes on from the part that failed: no part is posted twice', async () => {
    const discord = await new FakeDiscord().start();
    const answer = [1, 2, 3, 4].map((n) => `section ${n} `.padEnd(1_900, String(n))).join('\n');
    // Streamed (a few ms between pieces): the answer is first written into one message, which its part 1 replaces.
    const model = await new FakeOpenAi(() => ({ text: answer }), { streamGapMs: 4 }).start();
    try {
      await withWorkerWhere(
        {},
        async (taskQueue) => {
          // The third post is refused once (after parts 1 and 2 are in the channel).
          discord.refusePostAt = 3;
          const workflowId = `session:discord:${FAKE_CHANNEL}`;
          const input: SessionInput = { sessionId: workflowId, channel: 'discord', ownerId: 'U1' };
          await gateway.workflow.signalWithStart('sessionWorkflow', {
            workflowId,
            taskQueue,
            args: [input],
            signal: userMessageSignal,
            signalArgs: [{ messageId: randomUUID(), userId: 'U1', text: 'tell me everything' }],
          });
          const posted = await until('four posts', () => {
            const texts = [...discord.messages.values()].map((m) => m.content);
            return texts.length >= 4 ? texts : undefined;
          });
          expect(posted.map((text) => text.slice(0, 9))).toEqual([
            'section 1',
            'section 2',
            'section 3',
            'section 4',
          ]);
          await env.client.workflow.getHandle(workflowId).terminate();
        },
        {
          MODEL_PROVIDER: 'openai',
          OPENAI_BASE_URL: model.url,
          OPENAI_API_KEY: 'k',
          DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
          DISCORD_API_URL: discord.url,
        },
      );
    } finally {
      await model.stop();
      await discord.stop();
    }
  });
});

describe('a stored sign-in that cannot be read', () => {
  it('asks the person to connect again, saying why, once', async () => {
    const policy = {
      providers: { acme: { type: 'api_key', displayName: 'Acme', apiHosts: ['api.acme.example'] } },
      credentialTimeout: '2s',
    };
    await withWorkerWhere(
      {},
      async (taskQueue, config) => {
        // Written with another VAULT_KEY (a restored backup, a rotated key).
        const other = new SqliteVault(config.credentials.vaultPath, randomBytes(32));
        await other.put('alice', 'acme', { accessToken: 'from-before' }, null);
        await other.close();

        const session = new TestSession(env.client, taskQueue);
        await session.say('fetch https://api.acme.example/files with acme');
        const waiting = await session.waitFor((v) => v.status === 'waiting_credential', 'the sign-in prompt');
        const gate = waiting.gates.find((g): g is CredentialGate => g.kind === 'credential')!;
        expect(gate).toMatchObject({
          provider: 'acme',
          requesterId: 'alice',
          note: 'Your stored Acme sign-in could not be read and was removed; connect again.',
        });
        const expired = await session.waitFor(
          (v) => v.status === 'idle' && toolResults(v).length === 1,
          'the prompt to expire',
        );
        expect(toolResults(expired)[0]).toMatchObject({ status: 'expired' });

        // Forgotten: the next prompt is the ordinary one.
        await session.say('fetch https://api.acme.example/files with acme');
        const again = await session.waitFor(
          (v) =>
            v.gates.filter((g) => g.kind === 'credential').length === 2 && v.status === 'waiting_credential',
          'the second prompt',
        );
        const second = again.gates.filter((g): g is CredentialGate => g.kind === 'credential')[1]!;
        expect(second.note).toBeUndefined();
        await session.handle.terminate();
      },
      {},
      policy,
    );
  });
});

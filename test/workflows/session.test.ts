import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { AppConfig } from '../../infra/config';
import { testConfig } from '../helpers/config';
import { FakeOpenAi } from '../helpers/fake-openai';
import { FakeSlack } from '../helpers/fake-slack';
import { lastAnswer, TestSession, toolResults } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { createTestWorker, withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startTestTemporal();
});

afterAll(async () => {
  await env?.teardown();
});

/** Runs `body` with a fresh worker (own task queue, own DATA_DIR) and a fresh session. */
async function withSession(
  body: (session: TestSession, config: AppConfig) => Promise<void>,
  policy: Record<string, unknown> = {},
  extraEnv: Record<string, string> = {},
): Promise<void> {
  await withWorker(
    env,
    (taskQueue, config) => body(new TestSession(env.client, taskQueue), config),
    policy,
    extraEnv,
  );
}

function countLines(config: AppConfig, session: TestSession, file: string): number {
  const text = readFileSync(path.join(sessionWorkdir(config.dataDir, session.workflowId), file), 'utf8');
  return text.split('\n').filter(Boolean).length;
}

/**
 * Two approvals asked by `owner`; the first approved, then more refusals than the history allows, so the wait
 * continues as new; once the next run waits, the second approved. Returns the final view and both gates.
 */
async function decideOneThenContinueAsNew(session: TestSession, owner: string) {
  await session.say('run `echo a` and `echo b`', owner);
  const [decided, open] = await session.pendingGate(2);
  const firstRun = (await session.handle.describe()).runId;
  await session.decide({ gateId: decided!.id, choice: 'approve', userId: owner });
  await session.waitFor(
    (v) => v.gates.find((g) => g.id === decided!.id)?.resolution?.outcome === 'approved',
    'the first gate approved',
  );
  for (let i = 0; i < 4; i++)
    await session.decide({ gateId: open!.id, choice: 'approve', userId: `mallory${i}` });
  const deadline = Date.now() + 20_000;
  while ((await session.handle.describe()).runId === firstRun && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  expect((await env.client.workflow.getHandle(session.workflowId, firstRun).describe()).status.name).toBe(
    'CONTINUED_AS_NEW',
  );
  await session.waitFor((v) => v.status === 'waiting_approval', 'the resumed wait');
  await session.decide({ gateId: open!.id, choice: 'approve', userId: owner });
  return { view: await session.idle(), decided: decided!, open: open! };
}

describe('session workflow', () => {
  it('answers a message that needs no tool', async () => {
    await withSession(async (session) => {
      await session.say('hello there');
      const view = await session.idle();
      expect(lastAnswer(view)).toContain('You said: "hello there"');
      expect(view.gates).toHaveLength(0);
    });
  });

  it('runs an auto-approved tool without asking anyone', async () => {
    await withSession(async (session) => {
      await session.say('what time is it');
      const view = await session.idle();
      expect(view.gates).toHaveLength(0);
      const [result] = toolResults(view);
      expect(result).toMatchObject({ name: 'current_time', status: 'ok' });
      expect(lastAnswer(view)).toContain('current_time');
    });
  });

  it('asks before a shell command, runs it once when approved, and answers', async () => {
    await withSession(async (session, config) => {
      await session.say('run `echo ran >> count.txt; echo done`');
      const [gate] = await session.pendingGate();
      expect(gate).toMatchObject({
        toolName: 'shell_execute',
        args: { command: 'echo ran >> count.txt; echo done' },
        requesterId: 'alice',
      });
      expect((await session.state()).status).toBe('waiting_approval');
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      const view = await session.idle();
      expect(toolResults(view)[0]).toMatchObject({ status: 'ok' });
      expect(toolResults(view)[0]!.content).toContain('done');
      expect(view.gates[0]!.resolution).toMatchObject({ outcome: 'approved', by: 'alice' });
      expect(countLines(config, session, 'count.txt')).toBe(1);
    });
  });

  it('tells the server its status and what it waits for only when they change', async () => {
    await withSession(async (session) => {
      await session.say('run `true`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      await session.idle();
      await session.say('hello');
      await session.idle();
      const { events } = await session.handle.fetchHistory();
      const decode = (payload?: { data?: Uint8Array | null } | null) =>
        payload?.data?.length ? (JSON.parse(Buffer.from(payload.data).toString()) as unknown) : null;
      const statuses = events!.flatMap((e) => {
        const status =
          e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.AgentStatus;
        return status ? [decode(status)] : [];
      });
      const waiting = events!.flatMap((e) => {
        const fields = e.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields;
        return fields && 'waitingFor' in fields ? [decode(fields.waitingFor)] : [];
      });
      const owners = events!.filter(
        (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.AgentOwner,
      );
      expect(owners).toHaveLength(1);
      // Operators still see every change: running, waiting on the approval, running the tool, idle; twice.
      expect(statuses).toEqual(['running', 'waiting_approval', 'running', 'idle', 'running', 'idle']);
      expect(waiting).toEqual([null, 'approval of shell_execute (true) from @alice', null]);
    });
  });

  it('answers the first message of a new conversation in a few workflow tasks and three activities', async () => {
    await withSession(async (session) => {
      await session.say('hello');
      const view = await session.idle();
      expect(lastAnswer(view)).toContain('You said: "hello"');
      const { events } = await session.handle.fetchHistory();
      const activities = events!.flatMap((e) => {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
        return name ? [name] : [];
      });
      const tasks = events!.filter((e) => e.workflowTaskCompletedEventAttributes).length;
      // The previous run's transcript and the settings come in one read (they used to be two), beside the check of
      // the message's gateway seal; then the model.
      expect([...activities].sort()).toEqual(['callModel', 'loadRunOpening', 'verifyGatewaySeals']);
      expect(activities.at(-1)).toBe('callModel');
      expect(tasks).toBeGreaterThanOrEqual(3);
      expect(tasks).toBeLessThanOrEqual(4);

      // Within a minute the next message reuses those settings: its seal checked, then the model.
      await session.say('again');
      await session.waitFor(
        (v) => v.status === 'idle' && lastAnswer(v).includes('again'),
        'the second answer',
      );
      const next = await session.handle.fetchHistory();
      const nextActivities = next.events!.flatMap((e) => {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
        return name ? [name] : [];
      });
      expect(nextActivities.slice(activities.length)).toEqual(['verifyGatewaySeals', 'callModel']);
    });
  });

  it('records no patch marker and no TemporalChangeVersion write on a new run (versions are deployments)', async () => {
    await withSession(async (session) => {
      await session.say('run `echo hi`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      await session.idle();
      await session.say('ask one');
      const question = await session.pendingQuestion();
      await session.answer(question.id, [{ question: 'Environment', selected: ['staging'] }]);
      await session.idle();
      const { events } = await session.handle.fetchHistory();
      const markers = events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
      const versionWrites = events!.filter(
        (e) =>
          e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields
            ?.TemporalChangeVersion,
      );
      // 0.1 recorded about a dozen here, then one baseline marker; since the epoch versions are deployments.
      expect(markers).toHaveLength(0);
      expect(versionWrites).toHaveLength(0);
    });
  });

  it('tells the model the reason when a call is denied, and does not run it', async () => {
    await withSession(async (session, config) => {
      await session.say('run `echo ran >> count.txt`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'deny', reason: 'not on production' });
      const view = await session.idle();
      expect(toolResults(view)[0]).toMatchObject({ status: 'denied' });
      expect(toolResults(view)[0]!.content).toContain('denied by @alice: not on production');
      expect(lastAnswer(view)).toContain('not on production');
      expect(() => countLines(config, session, 'count.txt')).toThrow();
    });
  });

  it('runs the edited arguments on edit & approve and tells the model they were edited', async () => {
    await withSession(async (session) => {
      await session.say('run `echo original`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'edit', args: { command: 'echo edited' } });
      const view = await session.idle();
      const result = toolResults(view)[0]!;
      expect(result.content).toContain('edited the arguments');
      expect(result.content).toContain('echo edited');
      expect(result.content).not.toContain('original\n');
      expect(view.gates[0]!.resolution).toMatchObject({
        outcome: 'edited',
        args: { command: 'echo edited' },
      });
    });
  });

  it('refuses edited arguments that fail the schema and keeps the approval open', async () => {
    await withSession(async (session) => {
      await session.say('run `echo original`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'edit', args: { command: '' } });
      const view = await session.waitFor(
        (v) => v.notices.some((n) => n.text.includes('edited arguments were refused')),
        'a refusal notice',
      );
      expect(view.gates[0]!.status).toBe('pending');
      expect(view.notices.find((n) => n.text.includes('refused'))!.to).toBe('alice');
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      expect(toolResults(await session.idle())[0]!.content).toContain('original');
    });
  });

  it('expires an approval nobody decides and tells the model "expired", not "denied"', async () => {
    await withSession(
      async (session) => {
        await session.say('run `echo never`');
        await session.pendingGate();
        const view = await session.idle();
        expect(toolResults(view)[0]).toMatchObject({ status: 'expired' });
        expect(toolResults(view)[0]!.content).toContain('expired: nobody decided');
        expect(view.gates[0]!.resolution).toMatchObject({ outcome: 'expired' });
      },
      { tools: { shell_execute: { approvalTimeout: '2s' } } },
    );
  });

  it('still expires the approval nobody decides after another of the same step is approved', async () => {
    await withSession(
      async (session) => {
        await session.say('run `echo decided` and `echo forgotten`');
        const [decided] = await session.pendingGate(2);
        await session.decide({ gateId: decided!.id, choice: 'approve' });
        const view = await session.idle();
        expect(toolResults(view).map((r) => r.status)).toEqual(['ok', 'expired']);
        expect(toolResults(view)[0]!.content).toContain('decided');
        expect(view.gates.map((g) => g.resolution?.outcome)).toEqual(['approved', 'expired']);
      },
      { tools: { shell_execute: { approvalTimeout: '3s' } } },
    );
  });

  it('refuses a click from someone who may not decide, and accepts a configured approver', async () => {
    await withSession(
      async (session) => {
        await session.say('run `echo hi`');
        const [gate] = await session.pendingGate();
        await session.decide({ gateId: gate!.id, choice: 'approve', userId: 'mallory' });
        const refused = await session.waitFor(
          (v) => v.notices.some((n) => n.to === 'mallory'),
          'a notice to mallory',
        );
        expect(refused.notices.find((n) => n.to === 'mallory')!.text).toContain('You may not decide');
        expect(refused.gates[0]!.status).toBe('pending');
        await session.decide({ gateId: gate!.id, choice: 'approve', userId: 'bob' });
        const view = await session.idle();
        expect(view.gates[0]!.resolution).toMatchObject({ outcome: 'approved', by: 'bob' });
      },
      { approvers: ['bob'] },
    );
  });

  it('answers a second click on a decided gate with who decided, changing nothing', async () => {
    await withSession(async (session) => {
      await session.say('run `echo hi`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      await session.idle();
      await session.decide({ gateId: gate!.id, choice: 'deny', reason: 'too late' });
      const view = await session.waitFor(
        (v) => v.notices.some((n) => n.text.includes('already')),
        'an "already" notice',
      );
      expect(view.notices.find((n) => n.text.includes('already'))!.text).toMatch(
        /already approved by @alice on the web at \d\d:\d\d UTC/,
      );
      expect(view.gates[0]!.resolution!.outcome).toBe('approved');
      expect(toolResults(view)).toHaveLength(1);
    });
  });

  it('resolves the only open approval from a typed "deny <reason>" reply', async () => {
    await withSession(async (session) => {
      await session.say('run `echo hi`');
      await session.pendingGate();
      await session.say('deny use the staging box');
      const view = await session.idle();
      expect(toolResults(view)[0]!.content).toContain('denied by @alice: use the staging box');
      expect(view.transcript.filter((m) => m.role === 'user')).toHaveLength(1);
    });
  });

  it('asks which one when a typed "approve" meets several open approvals', async () => {
    await withSession(async (session) => {
      await session.say('run `echo one` and `echo two`');
      const gates = await session.pendingGate(2);
      await session.say('approve');
      const view = await session.waitFor(
        (v) => v.notices.some((n) => n.text.includes('Which one?')),
        'a "which one" notice',
      );
      expect(view.gates.every((g) => g.status === 'pending')).toBe(true);
      await session.say('approve');
      for (const gate of gates) await session.decide({ gateId: gate.id, choice: 'approve' });
      const done = await session.idle();
      expect(toolResults(done).map((r) => r.status)).toEqual(['ok', 'ok']);
    });
  });

  it('supersedes an open approval when the requester sends a new message, then handles that message', async () => {
    await withSession(async (session, config) => {
      await session.say('run `echo ran >> count.txt`');
      await session.pendingGate();
      await session.say('never mind, what time is it');
      const view = await session.waitFor(
        (v) =>
          v.status === 'idle' &&
          v.transcript.filter((m) => m.role === 'tool').length === 2 &&
          v.transcript.at(-1)?.role === 'assistant',
        'both turns to finish',
      );
      const [superseded, time] = toolResults(view);
      expect(superseded).toMatchObject({ status: 'superseded' });
      expect(superseded!.content).toContain('superseded by a new message');
      expect(time).toMatchObject({ name: 'current_time', status: 'ok' });
      expect(view.gates[0]!.resolution).toMatchObject({ outcome: 'superseded' });
      expect(() => countLines(config, session, 'count.txt')).toThrow();
    });
  });

  it('queues messages that arrive mid-turn and answers each in order', async () => {
    await withSession(async (session) => {
      await session.say('first');
      await session.say('second');
      await session.say('third');
      const view = await session.waitFor(
        (v) =>
          v.status === 'idle' &&
          v.queued === 0 &&
          v.transcript.filter((m) => m.role === 'assistant').length === 3,
        'three answers',
      );
      const answers = view.transcript
        .filter((m) => m.role === 'assistant')
        .map((m) => (m.role === 'assistant' ? m.text : ''));
      expect(answers.map((a) => /You said: "(\w+)"/.exec(a)?.[1])).toEqual(['first', 'second', 'third']);
      expect(view.transcript.map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
        'assistant',
      ]);
    });
  });

  it('stops a runaway loop at the step limit with every tool call answered', async () => {
    await withSession(
      async (session) => {
        await session.say('loop');
        const view = await session.idle();
        expect(lastAnswer(view)).toContain('step limit');
        const calls = view.transcript.flatMap((m) => (m.role === 'assistant' ? m.toolCalls : []));
        expect(calls).toHaveLength(3);
        expect(
          toolResults(view)
            .map((r) => r.toolCallId)
            .sort(),
        ).toEqual(calls.map((c) => c.id).sort());
      },
      { maxSteps: 3 },
    );
  });

  it('turns invalid tool arguments from the model into an error result, not a crash', async () => {
    await withSession(async (session) => {
      await session.say('bad arguments');
      const view = await session.idle();
      expect(toolResults(view)[0]).toMatchObject({ status: 'error' });
      expect(toolResults(view)[0]!.content).toContain('invalid arguments for shell_execute');
      expect(view.gates).toHaveLength(0);
    });
  });

  it('runs commands matching an allow pattern without asking, and blocks deny patterns', async () => {
    await withSession(
      async (session) => {
        await session.say('run `ls`');
        const allowed = await session.idle();
        expect(allowed.gates).toHaveLength(0);
        expect(toolResults(allowed)[0]!.status).toBe('ok');
        await session.say('run `rm -rf /tmp/nothing`');
        const blocked = await session.waitFor(
          (v) => toolResults(v).length === 2 && v.status === 'idle',
          'the second result',
        );
        expect(toolResults(blocked)[1]).toMatchObject({ status: 'denied' });
        expect(toolResults(blocked)[1]!.content).toContain('deny pattern');
      },
      { tools: { shell_execute: { allow: ['ls*'], deny: ['rm *'] } } },
    );
  });

  it('keeps "always allow in this conversation" to this conversation, and revokes it', async () => {
    const config = testConfig();
    const { worker, taskQueue } = await createTestWorker(env, config);
    await worker.runUntil(async () => {
      const session = new TestSession(env.client, taskQueue);
      await session.say('run `echo one`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'always', scope: 'session' });
      const first = await session.idle();
      // What the person saw: exactly this command, never every call of the tool.
      expect(first.grants).toMatchObject([{ toolName: 'shell_execute', pattern: 'echo one' }]);
      await session.say('run `echo one`');
      const second = await session.waitFor(
        (v) => toolResults(v).length === 2 && v.status === 'idle',
        'the second run',
      );
      expect(second.gates).toHaveLength(1);
      await session.say('run `echo two`');
      await session.pendingGate();
      await session.decide({ gateId: (await session.pendingGate())[0]!.id, choice: 'deny' });
      await session.idle();

      const other = new TestSession(env.client, taskQueue);
      await other.say('run `echo one`');
      await other.pendingGate();

      await session.handle.signal('revokeGrant', { grantId: first.grants[0]!.id, userId: 'alice' });
      await session.waitFor((v) => v.grants.length === 0, 'the grant to be revoked');
      await session.say('run `echo one`');
      await session.pendingGate();
    });
  });

  it('keeps "always allow everywhere for me" with a pattern across conversations', async () => {
    const config = testConfig();
    const { worker, taskQueue } = await createTestWorker(env, config);
    await worker.runUntil(async () => {
      const session = new TestSession(env.client, taskQueue);
      await session.say('run `git status`', 'carol');
      const [gate] = await session.pendingGate();
      await session.decide({
        gateId: gate!.id,
        choice: 'always',
        scope: 'user',
        pattern: 'git status*',
        userId: 'carol',
      });
      await session.idle();

      const other = new TestSession(env.client, taskQueue);
      await other.say('run `git status -s`', 'carol');
      const auto = await other.idle();
      expect(auto.gates).toHaveLength(0);
      await other.say('run `git push`', 'carol');
      await other.pendingGate();

      const third = new TestSession(env.client, taskQueue);
      await third.say('run `git status`', 'dave');
      await third.pendingGate();
    });
  });

  it('continues as new between turns, carrying transcript, grants and decided gates', async () => {
    await withSession(
      async (session) => {
        await session.say('run `echo first`');
        const [gate] = await session.pendingGate();
        await session.decide({ gateId: gate!.id, choice: 'always', scope: 'session' });
        await session.idle();
        const firstRun = (await session.handle.describe()).runId;
        await session.say('second');
        // The grant is exactly the command shown: the same command runs again without asking.
        await session.say('run `echo first`');
        const view = await session.waitFor(
          (v) =>
            v.status === 'idle' &&
            v.transcript.filter((m) => m.role === 'user').length === 3 &&
            v.transcript.at(-1)?.role === 'assistant',
          'three turns',
        );
        expect((await session.handle.describe()).runId).not.toBe(firstRun);
        expect(
          (await env.client.workflow.getHandle(session.workflowId, firstRun).describe()).status.name,
        ).toBe('CONTINUED_AS_NEW');
        expect(view.grants).toHaveLength(1);
        expect(view.gates).toHaveLength(1);
        expect(toolResults(view).map((r) => r.status)).toEqual(['ok', 'ok']);

        await session.decide({ gateId: gate!.id, choice: 'deny' });
        const after = await session.waitFor(
          (v) => v.notices.some((n) => n.text.includes('already always allowed')),
          'an "already" notice',
        );
        expect(after.gates[0]!.resolution!.outcome).toBe('always');
      },
      { continueAsNewAfterEvents: 20 },
    );
  });

  it('continues as new while approvals are open, and the old buttons still decide them', async () => {
    await withSession(
      async (session, config) => {
        await session.say('run `echo a >> count.txt` and `echo b >> count.txt`');
        const gates = await session.pendingGate(2);
        const firstRun = (await session.handle.describe()).runId;
        for (let i = 0; i < 4; i++)
          await session.decide({ gateId: gates[0]!.id, choice: 'approve', userId: `mallory${i}` });
        await session.waitFor(
          (v) => v.notices.filter((n) => n.to?.startsWith('mallory')).length === 4,
          'four refusals',
        );
        const deadline = Date.now() + 20_000;
        while ((await session.handle.describe()).runId === firstRun && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 100));
        expect(
          (await env.client.workflow.getHandle(session.workflowId, firstRun).describe()).status.name,
        ).toBe('CONTINUED_AS_NEW');
        const carried = await session.waitFor((v) => v.status === 'waiting_approval', 'the resumed wait');
        expect(carried.gates.filter((g) => g.status === 'pending').map((g) => g.id)).toEqual(
          gates.map((g) => g.id),
        );

        for (const gate of gates) await session.decide({ gateId: gate.id, choice: 'approve' });
        const view = await session.idle();
        expect(toolResults(view).map((r) => r.status)).toEqual(['ok', 'ok']);
        expect(countLines(config, session, 'count.txt')).toBe(2);
        expect(view.transcript.filter((m) => m.role === 'assistant' && m.toolCalls.length)).toHaveLength(1);
      },
      { continueAsNewAfterEvents: 20 },
    );
  });

  it('tells a decision once when the wait continues as new after it (the next run does not tell it again)', async () => {
    await withSession(
      async (session) => {
        const { view } = await decideOneThenContinueAsNew(session, 'alice');
        expect(toolResults(view).map((r) => r.status)).toEqual(['ok', 'ok']);
        const told = view.notices.filter((n) => !n.to && / approved by @/.test(n.text));
        expect(told.map((n) => n.text)).toHaveLength(2);
      },
      { continueAsNewAfterEvents: 20 },
    );
  });

  it('in a Slack thread, edits a decided prompt once when the wait continues as new after it', async () => {
    const slack = await new FakeSlack().start();
    try {
      await withSession(
        async (session) => {
          const { view, decided, open } = await decideOneThenContinueAsNew(session.inSlackThread(), 'U1');

          // Each prompt is edited once to show its decision (notices for everyone are not posted in Slack).
          const editsOf = (gateId: string) => {
            const posts = view.gates.find((g) => g.id === gateId)?.posts ?? [];
            expect(posts).toHaveLength(1);
            return slack.of('chat.update').filter((body) => posts.includes(String(body.ts)));
          };
          expect(editsOf(decided!.id)).toHaveLength(1);
          expect(editsOf(open!.id)).toHaveLength(1);
        },
        { continueAsNewAfterEvents: 20 },
        { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_API_URL: `${slack.url}/api/` },
      );
    } finally {
      await slack.stop();
    }
  });

  describe('ask_user', () => {
    it('asks as a question gate (never an approval, never a tool run) and returns the structured answers', async () => {
      await withSession(
        async (session) => {
          await session.say('ask me');
          const gate = await session.pendingQuestion();
          expect(gate.questions.map((q) => q.label)).toEqual(['Environment', 'Checks']);
          expect((await session.state()).status).toBe('waiting_answer');
          await session.answer(gate.id, [
            { question: 'Environment', selected: ['staging'] },
            { question: 'Checks', selected: ['lint', 'tests'], custom: 'fuzz' },
          ]);
          const view = await session.idle();
          const result = toolResults(view)[0]!;
          expect(result).toMatchObject({ name: 'ask_user', status: 'ok' });
          expect(JSON.parse(result.content)).toMatchObject({
            answers: [
              { question: 'Environment', selected: ['staging'] },
              { question: 'Checks', selected: ['lint', 'tests'], custom: 'fuzz' },
            ],
            answered_by: 'alice',
            answered_at: expect.stringMatching(/^20\d\d-/),
          });
          expect(lastAnswer(view)).toContain('Environment: staging; Checks: lint, tests, "fuzz"');
          expect(view.gates.every((g) => g.kind === 'question')).toBe(true);
          const history = await session.handle.fetchHistory();
          const activities = history.events!.flatMap((e) =>
            e.activityTaskScheduledEventAttributes
              ? [e.activityTaskScheduledEventAttributes.activityType!.name]
              : [],
          );
          expect(activities).not.toContain('runTool');
          expect(activities).not.toContain('planToolCall');
        },
        { tools: { ask_user: { policy: 'deny' } } },
      );
    });

    it('refuses invalid answers and answers from others, keeping the question open', async () => {
      await withSession(async (session) => {
        await session.say('ask me');
        const gate = await session.pendingQuestion();
        await session.answer(gate.id, [{ question: 'Environment', selected: ['moon'] }]);
        await session.answer(gate.id, [{ question: 'Environment', selected: ['staging'] }], 'mallory');
        const view = await session.waitFor((v) => v.notices.filter((n) => n.to).length === 2, 'two refusals');
        expect(view.notices.find((n) => n.to === 'alice')!.text).toBe(
          'Your answers were not accepted: "moon" is not an option of "Environment". The question is still open.',
        );
        expect(view.notices.find((n) => n.to === 'mallory')!.text).toContain(
          'You may not answer this question',
        );
        expect(view.gates[0]!.status).toBe('pending');
        await session.answer(gate.id, [{ question: 'Environment', selected: ['production'] }]);
        expect(lastAnswer(await session.idle())).toContain('Environment: production');
      });
    });

    it('takes a typed reply as the answer to a single question, and gives "no answer" on timeout', async () => {
      await withSession(
        async (session) => {
          await session.say('ask one');
          await session.pendingQuestion();
          await session.say('2');
          const answered = await session.idle();
          expect(JSON.parse(toolResults(answered)[0]!.content).answers).toEqual([
            { question: 'Environment', selected: ['production'] },
          ]);
          expect(answered.transcript.filter((m) => m.role === 'user')).toHaveLength(1);
          // Kept with the question it answered, to be shown where it was typed.
          expect(answered.gates[0]!.typed).toEqual([{ by: 'alice', text: '2', at: expect.any(Number) }]);

          await session.say('ask one');
          await session.pendingQuestion();
          const expired = await session.waitFor(
            (v) => toolResults(v).length === 2 && v.status === 'idle',
            'the question to expire',
          );
          expect(toolResults(expired)[1]).toMatchObject({
            status: 'expired',
            content: expect.stringContaining('no answer: nobody answered in time'),
          });
        },
        { questionTimeout: '2s' },
      );
    });

    it('gives the model an error for malformed questions', async () => {
      const fake = await new FakeOpenAi((request) =>
        request.messages.at(-1)!.role === 'tool'
          ? { text: `seen: ${request.messages.at(-1)!.content}` }
          : {
              toolCalls: [
                { id: 'q1', name: 'ask_user', args: { questions: [{ label: 'Env', prompt: 'Where?' }] } },
              ],
            },
      ).start();
      try {
        await withSession(
          async (session) => {
            await session.say('hi');
            const view = await session.idle();
            expect(view.gates).toHaveLength(0);
            expect(lastAnswer(view)).toContain('needs options, or allow_custom');
          },
          {},
          { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
        );
      } finally {
        await fake.stop();
      }
    });
  });
});

/** Sessions that start from an existing transcript, and the failure paths that must keep it consistent. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../infra/config';
import { fromJsonl } from '../../common/transcript-format';
import { exportTranscript, importTranscript } from '../../scripts/agentctl/transcripts';
import { INTERRUPTED_RESULT, RECOVERY_MARKER } from '../../workflows/session/repair';
import { tempDir, testConfig } from '../helpers/config';
import { FakeOpenAi } from '../helpers/fake-openai';
import { lastAnswer, TestSession, toolResults } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { createTestWorker, withWorker as withSharedWorker } from '../helpers/worker';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const withWorker = (
  body: (taskQueue: string, config: AppConfig) => Promise<void>,
  policy: Record<string, unknown> = {},
) => withSharedWorker(env, body, policy);

const DAMAGED = [
  '{"type":"user","id":"u1","user":"alice","text":"list files","at":"2026-11-20T10:00:00Z"}',
  '{"type":"assistant","id":"a1","text":"","tool_calls":[{"id":"c1","name":"shell_execute","arguments":{"command":"ls"}},{"id":"c2","name":"shell_execute","arguments":{"command":"pwd"}}],"at":"2026-11-20T10:00:01Z"}',
  '{"type":"tool_result","id":"t1","tool_call_id":"c1","name":"shell_execute","status":"ok","content":"a.txt","at":"2026-11-20T10:00:02Z"}',
].join('\n');

describe('starting from an existing transcript', () => {
  it('imports a damaged transcript, repairs its tail once, and carries on', async () => {
    await withWorker(async (taskQueue) => {
      const sessionId = `import-${Date.now()}`;
      const imported = await importTranscript(env.client, { taskQueue, sessionId, text: DAMAGED });
      expect(imported).toEqual({ workflowId: `session:web:${sessionId}`, messages: 3 });
      const session = Object.assign(new TestSession(env.client, taskQueue), {
        workflowId: imported.workflowId,
      });
      const repaired = await session.waitFor((v) => v.transcript.length === 4, 'the repair');
      expect(repaired.transcript[3]).toMatchObject({
        role: 'tool',
        toolCallId: 'c2',
        status: 'error',
        content: INTERRUPTED_RESULT,
      });

      await session.say('hello again');
      const view = await session.idle();
      expect(view.transcript.slice(0, 3).map((m) => m.id)).toEqual(['u1', 'a1', 't1']);
      expect(lastAnswer(view)).toContain('hello again');

      const exported = fromJsonl(await exportTranscript(env.client, sessionId));
      expect(exported.ok && exported.messages.map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'tool',
        'user',
        'assistant',
      ]);
      await expect(importTranscript(env.client, { taskQueue, sessionId, text: DAMAGED })).rejects.toThrow(
        /already running/,
      );
    });
  });

  it('refuses a broken file with the line numbers, importing nothing', async () => {
    await expect(
      importTranscript(env.client, { taskQueue: 'unused', sessionId: 'broken', text: `${DAMAGED}\n{oops` }),
    ).rejects.toThrow(/cannot be imported:\n {2}line 4: not valid JSON/);
  });

  it('continues after a terminated run, closing its interrupted call and answering the next message', async () => {
    await withWorker(async (taskQueue) => {
      const session = new TestSession(env.client, taskQueue);
      await session.say('run `echo never-ran`');
      await session.pendingGate();
      await session.handle.terminate('operator stopped it');

      await session.say('what happened?');
      const view = await session.idle();
      const roles = view.transcript.map((m) => m.role);
      expect(roles).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
      expect(view.transcript[2]).toMatchObject({
        role: 'tool',
        status: 'error',
        content: INTERRUPTED_RESULT,
      });
      expect(view.notices.map((n) => n.text)).toContain(
        'This conversation continues from an earlier run that ended unexpectedly.',
      );
      expect(lastAnswer(view)).toContain('what happened?');
    });
  });

  it('marks the orphan user turn of a run terminated mid model call with one recovery message', async () => {
    const fake = await new FakeOpenAi((request) => {
      const last = request.messages.at(-1)!;
      return last.content === 'hang' ? { hang: true } : { text: `answer to ${last.content}` };
    }).start();
    const config = testConfig(
      {},
      { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
    );
    const { worker, taskQueue } = await createTestWorker(env, config);
    try {
      await worker.runUntil(async () => {
        const session = new TestSession(env.client, taskQueue);
        await session.say('hang');
        await session.waitFor(
          (v) => v.transcript.length === 1 && v.status === 'running',
          'the model call to start',
        );
        await session.handle.terminate('stuck');
        await session.say('still there?');
        const view = await session.idle();
        expect(
          view.transcript.map((m) =>
            m.role === 'user' ? `user:${m.text}` : m.role === 'assistant' ? `assistant:${m.text}` : m.role,
          ),
        ).toEqual([
          'user:hang',
          `assistant:${RECOVERY_MARKER}`,
          'user:still there?',
          'assistant:answer to still there?',
        ]);
      });
    } finally {
      await fake.stop();
    }
  });
});

describe('reopening a session', () => {
  it('repairs an interrupted run once, however often the session is reopened', async () => {
    await withWorker(async (taskQueue) => {
      const session = new TestSession(env.client, taskQueue);
      await session.say('run `echo a` and `echo b`');
      await session.pendingGate(2);
      await session.handle.terminate('first interruption');

      await session.say('what happened?');
      await session.idle();
      await session.handle.terminate('second interruption');
      await session.say('and now?');
      const view = await session.waitFor(
        (v) =>
          v.status === 'idle' && v.transcript.at(-2)?.role === 'user' && lastAnswer(v).includes('and now?'),
        'the third run to answer',
      );

      const synthetic = view.transcript.filter((m) => m.role === 'tool' && m.synthetic);
      expect(synthetic.map((m) => m.role === 'tool' && m.content)).toEqual([
        INTERRUPTED_RESULT,
        INTERRUPTED_RESULT,
      ]);
      expect(toolResults(view)).toHaveLength(2);
      expect(view.transcript.filter((m) => m.role === 'assistant' && m.text === RECOVERY_MARKER)).toEqual([]);
      expect(view.transcript.map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'tool',
        'user',
        'assistant',
        'user',
        'assistant',
      ]);
    });
  });

  it('says so in the conversation when the earlier run cannot be read, instead of starting silently empty', async () => {
    await withWorker(async (taskQueue) => {
      const session = new TestSession(env.client, taskQueue);
      // Another kind of workflow once ran under this session's id: its history has no transcript to give.
      const other = await env.client.workflow.start('missionOwnerDirectoryWorkflow', {
        workflowId: session.workflowId,
        taskQueue,
        args: [{ ownerId: 'nobody' }],
      });
      await other.query('__stack_trace').catch(() => undefined);
      await other.terminate('not a session');

      await session.say('hello');
      const view = await session.idle();
      expect(view.transcript[0]).toMatchObject({
        role: 'assistant',
        synthetic: true,
        text: expect.stringMatching(
          /^I could not load this conversation's earlier messages \(.*the transcript of the earlier run .* could not be read: .*\), so this run starts without them\.$/,
        ),
      });
      expect(view.transcript.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
      expect(lastAnswer(view)).toContain('hello');
      // The run's opening failed with it, so the turn read the settings itself before calling the model.
      const { events } = await session.handle.fetchHistory();
      const scheduled = events!.flatMap(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
      );
      // (Beside the check of the message's gateway seal.)
      expect(scheduled.filter((name) => name !== 'verifyGatewaySeals')).toEqual([
        'loadRunOpening',
        'loadSettings',
        'callModel',
      ]);
    });
  });
});

describe('failure paths keep one result per tool call', () => {
  it('records a tool that cannot start (its working directory refused) as not run, after retries, and the model is told', async () => {
    await withWorker(async (taskQueue, config) => {
      writeFileSync(path.join(config.dataDir, 'workdirs'), 'not a directory');
      const session = new TestSession(env.client, taskQueue);
      await session.say('run `echo x`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      const view = await session.idle();
      expect(toolResults(view)).toHaveLength(1);
      // Nothing ran, so it is not "may or may not have run": the call was tried again, then given up.
      expect(toolResults(view)[0]).toMatchObject({
        status: 'error',
        content: expect.stringMatching(/^not run: shell_execute could not start \(ENOTDIR.*nothing ran$/),
      });
      expect(lastAnswer(view)).toContain('not run');
    });
  });

  it('gives a call in flight a cancelled result when the session is cancelled', async () => {
    await withWorker(async (taskQueue) => {
      const session = new TestSession(env.client, taskQueue);
      await session.say('run `sleep 60`');
      const [gate] = await session.pendingGate();
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      await session.waitFor((v) => v.status === 'running', 'the tool to start');
      await new Promise((resolve) => setTimeout(resolve, 500));
      await session.handle.cancel();
      await expect(session.handle.result()).rejects.toThrow();
      const transcript = await session.handle.query('transcript');
      const results = (transcript as { role: string; status?: string }[]).filter((m) => m.role === 'tool');
      expect(results).toEqual([expect.objectContaining({ status: 'cancelled' })]);
    });
  });
});

describe('agentctl', () => {
  it('exports a transcript as JSON Lines and explains a bad import', async () => {
    await withWorker(async (taskQueue) => {
      const session = new TestSession(env.client, taskQueue);
      await session.say('hello cli');
      await session.idle();
      const cliEnv = {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        AGENT_CONFIG: '',
      };
      const { stdout } = await run(
        process.execPath,
        [path.join(ROOT, 'bin/agentctl.js'), 'export', session.sessionId],
        { env: cliEnv },
      );
      expect(stdout.split('\n')[0]).toMatch(
        /^\{"type":"user","id":"[^"]+","user":"alice","text":"hello cli","at":"20/,
      );
      const bad = path.join(tempDir(), 'bad.jsonl');
      writeFileSync(bad, 'nope\n');
      const failed = await run(
        process.execPath,
        [path.join(ROOT, 'bin/agentctl.js'), 'import', bad, '--session', 'x1'],
        { env: cliEnv },
      ).catch((e: { code: number; stderr: string }) => e);
      expect(failed).toMatchObject({ code: 1, stderr: expect.stringContaining('line 1: not valid JSON') });
    });
  });
});

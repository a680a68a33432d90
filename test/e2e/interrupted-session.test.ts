/**
 * The interrupted-session scenario as its reporter tried it: `agentctl import` of the transcript an
 * interruption leaves (two tool calls, one answered, then a user message nobody answered), then the session
 * carries on with an OpenAI-compatible or an Anthropic-style model that validates the transcript like the
 * real API, and `agentctl export` gives back what was imported plus the repair, byte for byte stable.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionView } from '../../workflows/session/contract';
import { INTERRUPTED_RESULT, RECOVERY_MARKER } from '../../workflows/session/repair';
import { tempDir } from '../helpers/config';
import { FakeAnthropic, type MessagesRequest } from '../helpers/fake-anthropic';
import { FakeOpenAi, type ChatRequest } from '../helpers/fake-openai';
import { lastAnswer, TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const INTERRUPTED = [
  '{"type":"user","id":"u1","user":"alice","text":"list the files and show where we are","at":"2026-11-20T10:00:00.000Z"}',
  '{"type":"assistant","id":"a1","text":"Running both.","tool_calls":[{"id":"call_ls","name":"shell_execute","arguments":{"command":"ls"}},{"id":"call_pwd","name":"shell_execute","arguments":{"command":"pwd"}}],"at":"2026-11-20T10:00:01.000Z"}',
  '{"type":"tool_result","id":"t1","tool_call_id":"call_ls","name":"shell_execute","status":"ok","content":"a.txt\\nb.txt","at":"2026-11-20T10:00:02.000Z"}',
  '{"type":"user","id":"u2","user":"alice","text":"are you still there?","at":"2026-11-20T10:05:00.000Z"}',
].join('\n');

async function agentctl(taskQueue: string, ...args: string[]) {
  return await run(process.execPath, [path.join(ROOT, 'bin/agentctl.js'), ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue, AGENT_CONFIG: '' },
  });
}

function file(text: string): string {
  const target = path.join(tempDir(), 'transcript.jsonl');
  writeFileSync(target, text);
  return target;
}

/** Imports the interrupted transcript with the CLI and waits for the repair; returns the session. */
async function importInterrupted(taskQueue: string): Promise<{ session: TestSession; sessionId: string }> {
  const sessionId = `interrupted-${Date.now()}`;
  const { stdout } = await agentctl(taskQueue, 'import', file(INTERRUPTED), '--session', sessionId);
  expect(stdout).toContain(`imported 4 messages into session:web:${sessionId}`);
  const session = Object.assign(new TestSession(env.client, taskQueue), {
    workflowId: `session:web:${sessionId}`,
  });
  const repaired = await session.waitFor((v) => v.transcript.length >= 6, 'the repair');
  expect(repaired.transcript.slice(4)).toEqual([
    expect.objectContaining({
      role: 'tool',
      toolCallId: 'call_pwd',
      content: INTERRUPTED_RESULT,
      synthetic: true,
    }),
    expect.objectContaining({ role: 'assistant', text: RECOVERY_MARKER, synthetic: true }),
  ]);
  return { session, sessionId };
}

async function continueWith(session: TestSession, text: string): Promise<SessionView> {
  const before = (await session.state()).transcript.length;
  await session.say(text);
  return await session.waitFor(
    (v) =>
      v.status === 'idle' && v.transcript.length >= before + 2 && v.transcript.at(-1)?.role === 'assistant',
    'the answer',
  );
}

describe('an interrupted session, imported and continued', () => {
  it('is repaired once, and export → import → export gives the same bytes', async () => {
    await withWorker(env, async (taskQueue) => {
      const { sessionId } = await importInterrupted(taskQueue);
      const first = (await agentctl(taskQueue, 'export', sessionId)).stdout;
      expect(first.startsWith(`${INTERRUPTED}\n`)).toBe(true);
      const rows = first.trimEnd().split('\n');
      expect(rows).toHaveLength(6);
      expect(JSON.parse(rows[4]!)).toMatchObject({
        type: 'tool_result',
        tool_call_id: 'call_pwd',
        synthetic: true,
      });
      expect(JSON.parse(rows[5]!)).toMatchObject({
        type: 'assistant',
        text: RECOVERY_MARKER,
        synthetic: true,
      });

      const copy = `${sessionId}-copy`;
      await agentctl(taskQueue, 'import', file(first), '--session', copy);
      const copied = Object.assign(new TestSession(env.client, taskQueue), {
        workflowId: `session:web:${copy}`,
      });
      await copied.waitFor((v) => v.transcript.length === 6, 'the copy to start');
      expect((await agentctl(taskQueue, 'export', copy)).stdout).toBe(first);
    });
  });

  it('carries on with an OpenAI-compatible model that checks every tool call is answered', async () => {
    const fake = await new FakeOpenAi((request: ChatRequest) => ({
      text: `answer to: ${request.messages.at(-1)!.content}`,
    })).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const { session } = await importInterrupted(taskQueue);
          const view = await continueWith(session, 'what did ls show?');
          expect(lastAnswer(view)).toBe('answer to: what did ls show?');
          expect(fake.refusals).toEqual([]);
          expect(fake.requests[0]!.messages.map((m) => m.tool_call_id ?? m.role)).toEqual([
            'system',
            'user',
            'assistant',
            'call_ls',
            'call_pwd',
            'user',
            'assistant',
            'user',
          ]);
        },
        {},
        {
          MODEL_PROVIDER: 'openai',
          OPENAI_BASE_URL: fake.url,
          OPENAI_API_KEY: 'sk-test',
          MODEL: 'test-model',
        },
      );
    } finally {
      await fake.stop();
    }
  });

  it('carries on with an Anthropic-style model that checks every tool_use has its tool_result next', async () => {
    const fake = await new FakeAnthropic((request: MessagesRequest) => {
      const last = request.messages.at(-1)!;
      const text = typeof last.content === 'string' ? last.content : last.content.at(-1);
      return { text: `answer to: ${typeof text === 'object' && text.type === 'text' ? text.text : text}` };
    }).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const { session } = await importInterrupted(taskQueue);
          const view = await continueWith(session, 'what did ls show?');
          expect(lastAnswer(view)).toBe('answer to: what did ls show?');
          expect(fake.refusals).toEqual([]);
          const sent = fake.requests[0]!.messages;
          expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
          expect(sent[2]!.content).toEqual([
            expect.objectContaining({ type: 'tool_result', tool_use_id: 'call_ls', is_error: false }),
            expect.objectContaining({ type: 'tool_result', tool_use_id: 'call_pwd', is_error: true }),
            // The end of the previous call's request: a prompt-cache breakpoint (activities/model/anthropic.ts).
            { type: 'text', text: 'are you still there?', cache_control: { type: 'ephemeral' } },
          ]);
        },
        {},
        { MODEL_PROVIDER: 'anthropic', ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-test' },
      );
    } finally {
      await fake.stop();
    }
  });

  it('refuses a file whose tool results do not pair with calls, naming the lines, and starts nothing', async () => {
    await withWorker(env, async (taskQueue) => {
      const broken = [
        INTERRUPTED,
        '{"type":"tool_result","id":"t9","tool_call_id":"call_ghost","name":"shell_execute","status":"ok","content":"?","at":"2026-11-20T10:06:00.000Z"}',
        '{"type":"tool_result","id":"t10","tool_call_id":"call_ls","name":"shell_execute","status":"ok","content":"again","at":"2026-11-20T10:06:01.000Z"}',
      ].join('\n');
      const sessionId = `refused-${Date.now()}`;
      const failed = await agentctl(taskQueue, 'import', file(broken), '--session', sessionId).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed).toMatchObject({ code: 1 });
      const { stderr } = failed as { stderr: string };
      expect(stderr).toContain('line 5: the tool_result answers no tool call (no call has id "call_ghost")');
      expect(stderr).toContain('line 6: tool call "call_ls" already has a result on line 3');
      await expect(env.client.workflow.getHandle(`session:web:${sessionId}`).describe()).rejects.toThrow(
        /not found/i,
      );
    });
  });
});

/**
 * Slack's own streaming messages (#22) for an app set up as an AI app (`SLACK_ASSISTANT=on`): real worker and
 * gateway processes, signed Slack requests, a model server that streams, and a Slack fake that checks the
 * chat.startStream / appendStream / stopStream rules. The answer is appended to one streaming message that
 * shows the turn's tool steps as a plan; closing it delivers the answer, and Stop closes it marked stopped. A
 * workspace that refuses streaming messages gets the edited message instead, and a worker killed mid-stream
 * leaves one message, not two.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi, type ChatRequest, type Reply } from '../helpers/fake-openai';
import { FakeSlack } from '../helpers/fake-slack';
import { mention, SlackRequests, threadReply } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

const SECRET = 'slack-signing-secret-for-native-streams';
const answer = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `Line ${i + 1} of a streamed answer.`).join(' ');
/** About three seconds of streaming: several appends at one a second. */
const ANSWER = answer(24);
/** About ten seconds, still one Slack message: long enough to kill the worker in the middle. */
const LONG_ANSWER = answer(70);

let env: TestWorkflowEnvironment;
let model: FakeOpenAi;
let slack: FakeSlack;
let stack: Stack;
let requests: SlackRequests;

/** Asked again after a killed worker: answered at once, well within one edit interval. */
const RETRY_ANSWER = 'Short, this time.';
const asked = new Map<string, number>();

/** "with the time" asks for a tool first; "long" gets the long answer, then a short one when asked again. */
function script(request: ChatRequest): Reply {
  const question = [...request.messages].reverse().find((m) => m.role === 'user');
  const text = String(question?.content ?? '');
  if (text.includes('with the time') && request.messages.at(-1)!.role === 'user')
    return { toolCalls: [{ id: `call_${request.messages.length}`, name: 'current_time', args: {} }] };
  const times = (asked.get(text) ?? 0) + 1;
  asked.set(text, times);
  if (text.includes('long')) return { text: times === 1 ? LONG_ANSWER : RETRY_ANSWER };
  return { text: ANSWER };
}

beforeAll(async () => {
  env = await startTestTemporal();
  model = await new FakeOpenAi(script, { streamGapMs: 20 }).start();
  slack = await new FakeSlack().start();
  stack = await startStack({
    temporalAddress: env.address,
    env: {
      ...model.env,
      ...slack.env(SECRET),
      SLACK_ASSISTANT: 'on',
    },
  });
  requests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
});

afterAll(async () => {
  await stack?.stop();
  await slack?.stop();
  await model?.stop();
  await env?.teardown();
});

const streamsIn = (threadTs: string) =>
  [...slack.streams.entries()].filter(([, s]) => s.threadTs === threadTs);
const postedAnswers = (threadTs: string) =>
  slack
    .of('chat.postMessage')
    .filter((m) => m.thread_ts === threadTs && String(m.text).includes('Line 1 of'));

describe("Slack's streaming messages", () => {
  it('streams the answer into one message addressed to the requester, with the tool steps as a plan', async () => {
    const event = mention('tell me a story with the time');
    await requests.event(event);
    const [ts, stream] = await until('a streaming message in the thread', () => streamsIn(event.ts)[0]);
    const started = slack.of('chat.startStream').find((c) => c.thread_ts === event.ts)!;
    // In a channel a stream is addressed to the person who asked.
    expect(started).toMatchObject({ channel: 'C1', recipient_user_id: 'U1', recipient_team_id: 'T1' });
    expect(started.task_display_mode).toBe('plan');
    expect(stream.chunks).toContainEqual(
      expect.objectContaining({ type: 'task_update', title: 'current_time', status: 'complete' }),
    );
    await until('the stream closed', () => !stream.streaming, { timeoutMs: 30_000 });
    expect(stream.text).toBe(ANSWER);
    const appends = slack.of('chat.appendStream').filter((c) => c.ts === ts);
    expect(appends.length).toBeGreaterThanOrEqual(2);
    // Closing the stream delivered the answer: no copy posted, no edit of it.
    await until('the turn over', () => slack.of('reactions.remove').some((r) => r.timestamp === event.ts));
    expect(postedAnswers(event.ts)).toEqual([]);
    expect(slack.of('chat.update').filter((u) => u.ts === ts)).toEqual([]);
  });

  it('closes an answer in an assistant thread with the feedback buttons', async () => {
    const threadTs = '1700002000.000001';
    await requests.event({
      type: 'message',
      channel_type: 'im',
      user: 'U1',
      text: 'tell me a story',
      ts: '1700002000.000002',
      thread_ts: threadTs,
      channel: 'D7',
    });
    const [, stream] = await until(
      'a streaming message in the assistant thread',
      () => streamsIn(threadTs)[0],
    );
    // In a DM the other side is the recipient: no addressing needed.
    expect(slack.of('chat.startStream').find((c) => c.thread_ts === threadTs)).not.toHaveProperty(
      'recipient_user_id',
    );
    await until('the stream closed', () => !stream.streaming, { timeoutMs: 30_000 });
    expect(stream.text).toBe(ANSWER);
    const feedback = (stream.blocks as { type: string; elements: { type: string }[] }[] | undefined)?.find(
      (b) => b.type === 'context_actions',
    );
    expect(feedback?.elements[0]!.type).toBe('feedback_buttons');
    expect(postedAnswers(threadTs)).toEqual([]);
  });

  it('closes the stream with what was written, marked stopped, when the turn is stopped', async () => {
    const event = mention('a long tale, which I will stop');
    await requests.event(event);
    const [ts, stream] = await until('a streaming message in the thread', () => streamsIn(event.ts)[0]);
    await until('some of the answer written', () =>
      slack.of('chat.appendStream').some((c) => c.ts === ts) ? true : undefined,
    );
    await requests.event(threadReply(event.ts, 'stop'));
    await until('the stream closed', () => !stream.streaming);
    expect(stream.text.endsWith(' (stopped)')).toBe(true);
    expect(LONG_ANSWER.startsWith(stream.text.replace(/ \(stopped\)$/, ''))).toBe(true);
    await until('the stop noted', () =>
      slack
        .of('chat.postMessage')
        .find((m) => m.thread_ts === event.ts && String(m.text).includes('Stopped by')),
    );
    expect(slack.of('chat.update').filter((u) => u.ts === ts)).toEqual([]);
    expect(postedAnswers(event.ts)).toEqual([]);
  });

  it('edits a message instead in a workspace that refuses streaming messages', async () => {
    slack.refuseStreams = 'not_allowed_token_type';
    try {
      const event = mention('tell me a story');
      await requests.event(event, { teamId: 'T2' });
      await until('the message being written', () =>
        slack.of('chat.postMessage').find((m) => m.thread_ts === event.ts && String(m.text).endsWith(' …')),
      );
      await until(
        'the final answer in its place',
        () => slack.of('chat.update').find((u) => u.text === ANSWER && u.channel === 'C1'),
        { timeoutMs: 30_000 },
      );
      expect(streamsIn(event.ts)).toEqual([]);
      expect(postedAnswers(event.ts)).toHaveLength(1);
      expect(stack.worker.output).toContain('Slack refused a streaming message');
    } finally {
      slack.refuseStreams = undefined;
    }
  });

  it('leaves one message when the worker is killed mid-stream: the next attempt closes that stream and its answer replaces it', async () => {
    const event = mention('a long story please');
    await requests.event(event);
    const [ts, stream] = await until('a streaming message in the thread', () => streamsIn(event.ts)[0]);
    // Two appends in: the attempt has told Temporal which message it writes (its heartbeat), as it does at once.
    await until('some of the answer written', () =>
      slack.of('chat.appendStream').filter((c) => c.ts === ts).length >= 2 ? true : undefined,
    );
    await stack.restartWorker(); // SIGKILL mid-stream: the model call is retried by the new worker
    await until(
      'the final answer in the streamed message',
      () => slack.of('chat.update').find((u) => u.ts === ts && u.text === RETRY_ANSWER),
      {
        timeoutMs: 80_000,
        context: () =>
          `Slack calls: ${JSON.stringify(slack.calls.slice(-12).map((c) => [c.method, c.body.ts, String(c.body.text ?? c.body.markdown_text ?? '').slice(0, 40)]))}${stack.logTail()}`,
      },
    );
    // The killed attempt's stream was closed before it was edited (Slack refuses to edit a live stream).
    expect(stream.streaming).toBe(false);
    expect(streamsIn(event.ts)).toHaveLength(1);
    expect(postedAnswers(event.ts)).toEqual([]);
    expect(
      slack.of('chat.postMessage').filter((m) => m.thread_ts === event.ts && m.text === RETRY_ANSWER),
    ).toEqual([]);
  });
});

/** The model providers against local servers that speak the OpenAI and Anthropic APIs, inside real sessions. */
import { createServer } from 'node:http';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAnthropic } from '../../activities/model/anthropic';
import { requestOrder } from '../../activities/model/request-order';
import { scriptedModel } from '../../activities/model/scripted';
import { distinctCallIds } from '../../workflows/session/call-ids';
import type { Message } from '../../workflows/session/contract';
import { INTERRUPTED_RESULT, RECOVERY_MARKER } from '../../workflows/session/repair';
import { Tally } from '../chaos/summary';
import { FakeAnthropic, validateMessages } from '../helpers/fake-anthropic';
import { approveReusedIdCalls, reusedCallIdModel } from '../helpers/reused-call-ids';
import { FakeOpenAi, toolThenAnswer, type ChatRequest, type Reply } from '../helpers/fake-openai';
import { lastAnswer, TestSession, toolResults } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

async function withModel(
  extraEnv: Record<string, string>,
  body: (session: TestSession) => Promise<void>,
): Promise<void> {
  await withWorker(env, (taskQueue) => body(new TestSession(env.client, taskQueue)), {}, extraEnv);
}

async function withOpenAi(
  reply: (request: ChatRequest, index: number) => Reply,
  body: (session: TestSession, fake: FakeOpenAi) => Promise<void>,
) {
  const fake = await new FakeOpenAi(reply).start();
  try {
    await withModel(
      { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test', MODEL: 'test-model' },
      (s) => body(s, fake),
    );
  } finally {
    await fake.stop();
  }
}

describe('openai provider (Chat Completions)', () => {
  it('sends the transcript and tool results in the Chat Completions shape', async () => {
    await withOpenAi(toolThenAnswer('current_time', {}), async (session, fake) => {
      await session.say('what time is it?');
      const view = await session.idle();
      expect(lastAnswer(view)).toMatch(/^The tool said: \[ok\] 20\d\d-/);
      const second = fake.requests[1]!;
      expect(second.model).toBe('test-model');
      expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(second.messages[2]!.tool_calls![0]!.function).toEqual({
        name: 'current_time',
        arguments: '{}',
      });
      // Usage is the provider's own count: both answers' prompt and completion tokens.
      const reported = fake.usages.reduce((sum, u) => sum + u.prompt_tokens + u.completion_tokens, 0);
      expect(view.usage).toEqual({ tokens: reported, costUsd: 0, calls: 2 });
    });
  });

  it('tells the user plainly when the key is rejected, without retrying', async () => {
    await withOpenAi(
      () => ({
        status: 401,
        body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
      }),
      async (session, fake) => {
        await session.say('hello');
        const view = await session.idle();
        expect(lastAnswer(view)).toContain(
          'I could not get an answer from the model: the openai API rejected the key (HTTP 401): check OPENAI_API_KEY',
        );
        expect(fake.requests).toHaveLength(1);
        expect(view.transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
      },
    );
  });

  it('names the model when it is unknown', async () => {
    await withOpenAi(
      () => ({ status: 404, body: { error: { message: 'The model does not exist' } } }),
      async (session, fake) => {
        await session.say('hello');
        expect(lastAnswer(await session.idle())).toContain(
          'does not know the model "test-model" (HTTP 404): check MODEL',
        );
        expect(fake.requests).toHaveLength(1);
      },
    );
  });

  it('retries rate limits and server errors with backoff, then answers', async () => {
    await withOpenAi(
      (_request, index) =>
        index === 0
          ? { status: 429, body: { error: { message: 'slow down' } } }
          : index === 1
            ? { status: 503, body: { error: { message: 'overloaded' } } }
            : { text: 'finally' },
      async (session, fake) => {
        await session.say('hello');
        expect(lastAnswer(await session.idle())).toBe('finally');
        expect(fake.requests).toHaveLength(3);
      },
    );
  });

  it('gives the model an error result for unparsable tool arguments', async () => {
    let calls = 0;
    await withOpenAi(
      (request) => {
        calls++;
        const last = request.messages.at(-1)!;
        if (last.role === 'tool') return { text: `seen: ${last.content}` };
        return {
          status: 200,
          body: {
            id: 'x',
            object: 'chat.completion',
            created: 0,
            model: 'm',
            choices: [
              {
                index: 0,
                finish_reason: 'tool_calls',
                message: {
                  role: 'assistant',
                  content: null,
                  tool_calls: [
                    {
                      id: 'c1',
                      type: 'function',
                      function: { name: 'shell_execute', arguments: '{"command": "ls"' },
                    },
                  ],
                },
              },
            ],
          },
        };
      },
      async (session) => {
        await session.say('go');
        const view = await session.idle();
        expect(toolResults(view)[0]).toMatchObject({
          status: 'error',
          content: expect.stringContaining('invalid arguments for shell_execute'),
        });
        expect(view.gates).toHaveLength(0);
      },
    );
    expect(calls).toBe(2);
  });
});

describe('anthropic provider (Messages API)', () => {
  it('round-trips a tool_use and its tool_result, with the API key sent', async () => {
    const requests: {
      body: { messages: { role: string; content: { type: string }[] }[]; system: string };
      key: string | undefined;
    }[] = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw);
        requests.push({
          body,
          key: (req.headers['x-api-key'] as string | undefined) ?? req.headers.authorization,
        });
        const last = body.messages.at(-1);
        const toolResult = last.content.find((b: { type: string }) => b.type === 'tool_result');
        const content = toolResult
          ? [{ type: 'text', text: `anthropic saw ${toolResult.content.slice(0, 4)}` }]
          : [{ type: 'tool_use', id: 'toolu_1', name: 'current_time', input: {} }];
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: body.model,
            content,
            stop_reason: toolResult ? 'end_turn' : 'tool_use',
            stop_sequence: null,
            // Cached prompt tokens are input too.
            usage: {
              input_tokens: 100,
              output_tokens: 20,
              cache_creation_input_tokens: 5,
              cache_read_input_tokens: 1_000,
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as { port: number }).port;
    try {
      await withModel(
        {
          MODEL_PROVIDER: 'anthropic',
          ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
          ANTHROPIC_API_KEY: 'sk-ant-test',
        },
        async (session) => {
          await session.say('time?');
          const view = await session.idle();
          expect(lastAnswer(view)).toMatch(/^anthropic saw 20\d\d$/);
          // Cache reads are input like any other, and counted apart too.
          expect(view.usage).toEqual({ tokens: 2 * 1_125, costUsd: 0, calls: 2, cachedTokens: 2 * 1_000 });
        },
      );
    } finally {
      server.close();
    }
    expect(requests[0]!.key).toMatch(/^(Bearer )?sk-ant-test$/);
    expect(requests[1]!.body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });
});

describe('message mapping and the scripted model', () => {
  const at = 0;
  it('merges tool results and a following user message into one Anthropic user turn', () => {
    const transcript: Message[] = [
      { role: 'user', id: 'u1', userId: 'a', text: 'hi', at },
      {
        role: 'assistant',
        id: 'a1',
        text: '',
        toolCalls: [{ id: 't1', name: 'current_time', args: {} }],
        at,
      },
      {
        role: 'tool',
        id: 'r1',
        toolCallId: 't1',
        name: 'current_time',
        status: 'superseded',
        content: 'not run',
        at,
      },
      { role: 'user', id: 'u2', userId: 'a', text: 'again', at },
    ];
    const mapped = toAnthropic(transcript);
    expect(mapped.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(mapped[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'not run', is_error: true },
      { type: 'text', text: 'again' },
    ]);
  });

  it('quotes a short result in its answer and summarises a long one, as a real model does', () => {
    const after = (content: string) =>
      scriptedModel([
        { role: 'user', id: 'u', userId: 'a', text: 'run `x`', at },
        {
          role: 'assistant',
          id: 'a1',
          text: '',
          toolCalls: [{ id: 'c1', name: 'shell_execute', args: { command: 'x' } }],
          at,
        },
        { role: 'tool', id: 't1', toolCallId: 'c1', name: 'shell_execute', status: 'ok', content, at },
      ]).text;
    expect(after('hello\n')).toContain('```\nhello\n');
    const listing = Array.from({ length: 14 }, (_, i) => `-rw-r--r-- 1 root root 42 file-${i}`).join('\n');
    const summary = after(`total 48\n${listing}\n`);
    expect(summary).toContain('returned 15 lines');
    expect(summary).toContain('begins `total 48`');
    expect(summary).not.toContain('file-13');
  });

  it('maps the documented phrases to tool calls', () => {
    const say = (text: string) => scriptedModel([{ role: 'user', id: 'u', userId: 'a', text, at }]);
    expect(say('run `ls -la`').toolCalls).toEqual([
      { id: 'call_u_1_0', name: 'shell_execute', args: { command: 'ls -la' } },
    ]);
    expect(say('run `a` and `b`').toolCalls.map((c) => c.args)).toEqual([{ command: 'a' }, { command: 'b' }]);
    expect(say('fetch https://example.com').toolCalls[0]).toMatchObject({
      name: 'http_request',
      args: { method: 'GET', url: 'https://example.com' },
    });
    expect(say('post https://example.com hi').toolCalls[0]).toMatchObject({
      args: { method: 'POST', body: 'hi' },
    });
    expect(say('time in Asia/Tokyo').toolCalls[0]).toMatchObject({
      name: 'current_time',
      args: { timezone: 'Asia/Tokyo' },
    });
    expect(say('hello').toolCalls).toEqual([]);
  });
});

describe('requests in the order the providers accept', () => {
  const at = 0;
  const call = (id: string) => ({ id, name: 'shell_execute', args: { command: id } });
  const result = (id: string, callId: string, extra: Partial<Message> = {}): Message =>
    ({
      role: 'tool',
      id,
      toolCallId: callId,
      name: 'shell_execute',
      status: 'ok',
      content: id,
      at,
      ...extra,
    }) as Message;
  /** What an interruption leaves, after repair: the second result and the marker come after the user's message. */
  const interrupted: Message[] = [
    { role: 'user', id: 'u1', userId: 'a', text: 'list and show', at },
    { role: 'assistant', id: 'a1', text: '', toolCalls: [call('c1'), call('c2')], at },
    result('t1', 'c1'),
    { role: 'user', id: 'u2', userId: 'a', text: 'still there?', at },
    result('t2', 'c2', { status: 'error', content: INTERRUPTED_RESULT, synthetic: true }),
    { role: 'assistant', id: 'm1', text: RECOVERY_MARKER, toolCalls: [], at, synthetic: true },
    { role: 'user', id: 'u3', userId: 'a', text: 'and now?', at },
  ];

  it('makes call ids unique: repeated in one reply, reused from an earlier call or gate, or missing', () => {
    const call = (id: unknown) => ({ id: id as string, name: 'current_time', args: {} });
    const calls = [call('x'), call('x'), call('old'), call('old-2'), call(undefined), call('')];
    const distinct = distinctCallIds(calls, new Set(['old', 'budget:1']));
    expect(distinct.same ? [] : distinct.calls.map((c) => c.id)).toEqual([
      'x',
      'x-2',
      'old-2',
      'old-2-2',
      'call',
      'call-2',
    ]);
    expect(distinctCallIds([call('a'), call('b')], new Set(['old']))).toEqual({ same: true });
  });

  it('asks for and runs each tool call once when the model reuses a call id, in one reply and in later ones', async () => {
    const fake = await reusedCallIdModel().start();
    try {
      await withModel(
        { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
        async (s) => {
          // The third reply reuses the id of an approved call with other arguments: asked about like any other.
          const gates = await approveReusedIdCalls(s);
          const view = await s.waitFor(
            (v) => v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant',
            'the answer',
          );
          expect(lastAnswer(view)).toBe('all done');
          const results = toolResults(view);
          // Scoreboard: the reused id of an approved call got nothing through (no approval skipped, nothing rerun).
          const tally = new Tally();
          const firstRuns = results.filter((r) => r.content.includes('first')).length;
          const refused = gates.length === 3 && firstRuns === 1;
          tally.check(refused, () => `${gates.length} approvals asked, 'echo first' ran ${firstRuns} times`);
          if (!refused) tally.lost++;
          tally.finish("approvals: a model reusing an approved call's id");
          expect(gates.map((g) => g.args.command)).toEqual(['echo first', 'echo second', 'echo third']);
          expect(results.map((r) => r.toolCallId)).toEqual(['dup', 'dup-2', 'dup-3', 'dup-4']);
          expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
          expect(results.map((r) => r.content.match(/first|second|third/)?.[0] ?? r.name)).toEqual([
            'first',
            'second',
            'current_time',
            'third',
          ]);
          // Every call reached the model with its own result (the fake refuses anything else, like the API).
          expect(fake.refusals).toEqual([]);
          expect(fake.requests.at(-1)!.messages.filter((m) => m.role === 'tool')).toHaveLength(4);
        },
      );
    } finally {
      await fake.stop();
    }
  });

  it('puts every result right after its call, whatever order the transcript stored them in', () => {
    expect(requestOrder(interrupted).map((m) => m.id)).toEqual(['u1', 'a1', 't1', 't2', 'u2', 'm1', 'u3']);
    const mapped = toAnthropic(interrupted);
    expect(validateMessages(mapped as never)).toBeUndefined();
    expect(mapped[2]!.content).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'c1' }),
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'c2', is_error: true }),
      { type: 'text', text: 'still there?' },
    ]);
  });

  it('answers a call with no stored result, and leaves out results that answer nothing or come twice', () => {
    const view = requestOrder([
      { role: 'user', id: 'u1', userId: 'a', text: 'go', at },
      { role: 'assistant', id: 'a1', text: '', toolCalls: [call('c1'), call('c2')], at },
      result('t1', 'c1'),
      result('t1b', 'c1'),
      result('tx', 'ghost'),
      { role: 'user', id: 'u2', userId: 'a', text: 'next', at },
    ]);
    expect(view.map((m) => (m.role === 'tool' ? `${m.toolCallId}:${m.status}` : m.id))).toEqual([
      'u1',
      'a1',
      'c1:ok',
      'c2:error',
      'u2',
    ]);
    expect(view[3]).toMatchObject({ content: INTERRUPTED_RESULT, synthetic: true });
    const note: Message = {
      role: 'assistant',
      id: 'n',
      text: 'could not load',
      toolCalls: [],
      at,
      synthetic: true,
    };
    expect(toAnthropic([note, { role: 'user', id: 'u', userId: 'a', text: 'hi', at }])).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ]);
  });

  it('has a fake Chat Completions API that refuses unpaired tool messages with the real 400s', async () => {
    const fake = await new FakeOpenAi(() => ({ text: 'ok' })).start();
    const post = async (messages: unknown[]) => {
      const response = await fetch(`${fake.url}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', messages }),
      });
      return { status: response.status, body: (await response.json()) as { error?: { message: string } } };
    };
    const assistant = {
      role: 'assistant',
      content: null,
      tool_calls: ['c1', 'c2'].map((id) => ({
        id,
        type: 'function',
        function: { name: 'f', arguments: '{}' },
      })),
    };
    try {
      const stored = await post([
        { role: 'user', content: 'go' },
        assistant,
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
        { role: 'user', content: 'still there?' },
        { role: 'tool', tool_call_id: 'c2', content: 'y' },
      ]);
      expect(stored).toEqual({
        status: 400,
        body: {
          error: {
            message:
              "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: c2",
            type: 'invalid_request_error',
            param: 'messages.[1].role',
            code: null,
          },
        },
      });
      expect(
        (
          await post([
            { role: 'user', content: 'go' },
            { role: 'tool', tool_call_id: 'c1', content: 'x' },
          ])
        ).body.error?.message,
      ).toBe(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      );
      expect(
        (await post([assistant, { role: 'tool', tool_call_id: 'c9', content: 'x' }])).body.error?.message,
      ).toBe("Invalid parameter: 'tool_call_id' of 'c9' not found in 'tool_calls' of previous message.");
      const ordered = await post([
        { role: 'user', content: 'go' },
        assistant,
        { role: 'tool', tool_call_id: 'c2', content: 'y' },
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
        { role: 'user', content: 'still there?' },
      ]);
      expect(ordered.status).toBe(200);
    } finally {
      await fake.stop();
    }
  });

  it('has a fake Messages API that refuses tool_use without results next, and results without a tool_use', async () => {
    const fake = await new FakeAnthropic(() => ({ text: 'ok' })).start();
    const post = async (messages: unknown[]) => {
      const response = await fetch(`${fake.url}/v1/messages`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', max_tokens: 10, messages }),
      });
      return { status: response.status, body: (await response.json()) as { error?: { message: string } } };
    };
    const use = (id: string) => ({ type: 'tool_use', id, name: 'f', input: {} });
    const res = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'x' });
    try {
      const stored = await post([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [use('c1'), use('c2')] },
        { role: 'user', content: [res('c1'), { type: 'text', text: 'still there?' }, res('c2')] },
      ]);
      expect(stored.status).toBe(400);
      expect(stored.body.error?.message).toBe(
        'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: c2. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
      );
      expect((await post([{ role: 'user', content: [res('c7')] }])).body.error?.message).toBe(
        'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: c7. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
      );
      const ordered = await post([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [use('c1'), use('c2')] },
        { role: 'user', content: [res('c1'), res('c2'), { type: 'text', text: 'still there?' }] },
      ]);
      expect(ordered.status).toBe(200);
    } finally {
      await fake.stop();
    }
  });
});

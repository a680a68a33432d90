/**
 * A local server speaking the OpenAI Chat Completions API (POST /v1/chat/completions), so the real
 * `openai` client and provider code run against it. Each test scripts the replies. Like the real API it
 * refuses (HTTP 400, same messages) a transcript whose tool messages do not pair with the assistant's
 * tool_calls, and it takes a little while to answer.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { pieces, writeStream, type StreamEvent } from './fake-stream';

export interface ChatRequest {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { function: { name: string } }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  prompt_cache_key?: string;
}

export type Reply =
  | { hang: true }
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { text: string }
  | { toolCalls: { id: string; name: string; args: unknown }[] };

export interface FakeModelOptions {
  /** How long each answer takes, in ms: a random value in [min, max]. */
  latency?: [number, number];
  /**
   * The model's context window in tokens, counted like the runtime's estimate would not: every character of the
   * request body / 3.5 (real tokenizers vary). A longer request gets the API's own context-length 400.
   */
  contextTokens?: number;
  /** A streamed answer's pause between events, in ms (default 25). */
  streamGapMs?: number;
  /**
   * Prompt caching as OpenAI's: a request whose prefix (the tools, then whole messages) repeats an earlier request
   * of the same `prompt_cache_key` reads it from the cache, reported as `prompt_tokens_details.cached_tokens`, when
   * that prefix is 1,024 tokens or more, in steps of 128. Off: no cached tokens ever.
   */
  promptCache?: boolean;
}

/** A rough token count of a whole request body (what a real context window is measured against). */
export function requestTokens(raw: string): number {
  return Math.ceil(raw.length / 3.5);
}

export class FakeOpenAi {
  readonly requests: ChatRequest[] = [];
  readonly authorizations: string[] = [];
  /** The 400s sent because a request broke the API's message rules, with the request's index. */
  readonly refusals: { index: number; message: string; param: string }[] = [];
  /** Requests refused as longer than `contextTokens`, by index. */
  readonly contextRefusals: number[] = [];
  /** Requests whose caller went away before an answer (an aborted call), by index. */
  readonly closedUnanswered: number[] = [];
  /** The usage fields of every answer sent, in order (what a budget must add up to). */
  readonly usages: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
  }[] = [];
  private server: Server | undefined;
  url = '';

  constructor(
    private readonly reply: (request: ChatRequest, index: number) => Reply,
    private readonly options: FakeModelOptions = {},
  ) {}

  /** What a worker needs to use this fake as its model. */
  get env(): Record<string, string> {
    return { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: this.url, OPENAI_API_KEY: 'k' };
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'not found' } }));
          return;
        }
        const request = JSON.parse(raw) as ChatRequest;
        this.requests.push(request);
        this.authorizations.push(req.headers.authorization ?? '');
        const index = this.requests.length - 1;
        res.on('close', () => {
          if (!res.writableEnded) this.closedUnanswered.push(index);
        });
        const invalid = validateChatMessages(request.messages);
        if (invalid) this.refusals.push({ index, ...invalid });
        const tokens = requestTokens(raw);
        const tooLong = this.options.contextTokens !== undefined && tokens > this.options.contextTokens;
        if (tooLong) this.contextRefusals.push(index);
        const reply: Reply = tooLong
          ? {
              status: 400,
              body: {
                error: {
                  message: `This model's maximum context length is ${this.options.contextTokens} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
                  type: 'invalid_request_error',
                  param: 'messages',
                  code: 'context_length_exceeded',
                },
              },
            }
          : invalid
            ? {
                status: 400,
                body: {
                  error: {
                    message: invalid.message,
                    type: 'invalid_request_error',
                    param: invalid.param,
                    code: null,
                  },
                },
              }
            : this.reply(request, index);
        if ('hang' in reply) return; // never answers: a model call that is in flight when something else happens
        setTimeout(() => this.answer(res, request, reply), latency(this.options.latency));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
    return this;
  }

  private answer(res: ServerResponse, request: ChatRequest, reply: Exclude<Reply, { hang: true }>) {
    if (res.destroyed) return;
    if ('status' in reply) {
      res
        .writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
        .end(JSON.stringify(reply.body));
      return;
    }
    if (request.stream) return void this.stream(res, request, reply);
    const message = assistantMessage(reply);
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${this.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [{ index: 0, message, finish_reason: 'text' in reply ? 'stop' : 'tool_calls' }],
        usage: this.recordUsage(usageOf(request, message, this.cachedFor(request))),
      }),
    );
  }

  /** `stream: true`: the answer as chat.completion.chunk events, usage last when asked for, then [DONE]. */
  private async stream(
    res: ServerResponse,
    request: ChatRequest,
    reply: { text: string } | { toolCalls: { id: string; name: string; args: unknown }[] },
  ) {
    const base = {
      id: `chatcmpl-${this.requests.length}`,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
    };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      data: { ...base, choices: [{ index: 0, delta, finish_reason: finish }] },
    });
    const events: StreamEvent[] =
      'text' in reply
        ? pieces(reply.text).map((text, i) =>
            chunk(i === 0 ? { role: 'assistant', content: text } : { content: text }),
          )
        : reply.toolCalls.flatMap((call, index) => [
            chunk({
              ...(index === 0 ? { role: 'assistant', content: null } : {}),
              tool_calls: [
                { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
              ],
            }),
            ...pieces(JSON.stringify(call.args), 12).map((args) =>
              chunk({ tool_calls: [{ index, function: { arguments: args } }] }),
            ),
          ]);
    events.push(chunk({}, 'text' in reply ? 'stop' : 'tool_calls'));
    const usage = this.recordUsage(usageOf(request, assistantMessage(reply), this.cachedFor(request)));
    if (request.stream_options?.include_usage) events.push({ data: { ...base, choices: [], usage } });
    await writeStream(res, events, this.options.streamGapMs ?? 25, '[DONE]');
  }

  /** What this request reads from the prompt cache: its prefix shared with earlier requests of its cache key. */
  private cachedFor(request: ChatRequest): number {
    if (!this.options.promptCache) return 0;
    const index = this.requests.indexOf(request);
    const earlier = this.requests
      .slice(0, index)
      .filter((r) => r.prompt_cache_key !== undefined && r.prompt_cache_key === request.prompt_cache_key);
    return sharedPrefixTokens(request, earlier);
  }

  private recordUsage<T extends { prompt_tokens: number; completion_tokens: number }>(usage: T): T {
    this.usages.push(usage);
    return usage;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** The assistant message a reply is, as the API returns it (whole, or as what the chunks add up to). */
function assistantMessage(
  reply: { text: string } | { toolCalls: { id: string; name: string; args: unknown }[] },
) {
  return 'text' in reply
    ? { role: 'assistant', content: reply.text }
    : {
        role: 'assistant',
        content: null,
        tool_calls: reply.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.args) },
        })),
      };
}

/** Like the real API, usage counts the request and the answer (here by characters, as requestTokens does). */
function usageOf(request: unknown, answer: unknown, cached = 0) {
  const prompt = requestTokens(JSON.stringify(request));
  const completion = Math.ceil(JSON.stringify(answer).length / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: Math.min(cached, prompt) },
  };
}

/** The tokens of the longest prefix (tools, then whole messages) `request` shares with an earlier one. */
function sharedPrefixTokens(request: ChatRequest, earlier: readonly ChatRequest[]): number {
  let best = 0;
  for (const before of earlier) {
    if (JSON.stringify(before.tools ?? []) !== JSON.stringify(request.tools ?? [])) continue;
    let same = 0;
    while (
      same < before.messages.length &&
      same < request.messages.length &&
      JSON.stringify(before.messages[same]) === JSON.stringify(request.messages[same])
    )
      same++;
    const tokens = requestTokens(
      JSON.stringify({ tools: request.tools ?? [], messages: request.messages.slice(0, same) }),
    );
    best = Math.max(best, same ? tokens : 0);
  }
  return best >= 1024 ? Math.floor(best / 128) * 128 : 0;
}

export function latency(range: [number, number] = [30, 150]): number {
  return range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1));
}

/**
 * The Chat Completions pairing rules, with the API's own messages: an assistant message with tool_calls is
 * followed by one tool message per tool_call_id before any other message; a tool message answers a call
 * of the assistant message right before it (possibly after sibling tool messages).
 */
export function validateChatMessages(
  messages: ChatRequest['messages'],
): { message: string; param: string } | undefined {
  let open: { index: number; ids: string[]; answered: Set<string> } | undefined;
  const unanswered = () => open!.ids.filter((id) => !open!.answered.has(id));
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      if (!open)
        return {
          message:
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${index}].role`,
        };
      if (!open.ids.includes(message.tool_call_id ?? ''))
        return {
          message: `Invalid parameter: 'tool_call_id' of '${message.tool_call_id}' not found in 'tool_calls' of previous message.`,
          param: `messages.[${index}].tool_call_id`,
        };
      open.answered.add(message.tool_call_id!);
      continue;
    }
    if (open && unanswered().length) return missingResponses(open.index, unanswered());
    open =
      message.role === 'assistant' && message.tool_calls?.length
        ? { index, ids: message.tool_calls.map((call) => call.id), answered: new Set() }
        : undefined;
  }
  if (open && unanswered().length) return missingResponses(open.index, unanswered());
  return undefined;
}

function missingResponses(index: number, ids: string[]) {
  return {
    message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${ids.join(', ')}`,
    param: `messages.[${index}].role`,
  };
}

/** The usual script: a tool call on the user's message, then an answer quoting the tool result. */
export function toolThenAnswer(toolName: string, args: unknown) {
  return (request: ChatRequest): Reply => {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: `The tool said: ${last.content}` };
    return { toolCalls: [{ id: `call_${request.messages.length}`, name: toolName, args }] };
  };
}

/**
 * A local server speaking the Anthropic Messages API (POST /v1/messages), so the real `@anthropic-ai/sdk`
 * client and provider code run against it. Each test scripts the replies. Like the real API it refuses
 * (HTTP 400, same messages) tool_use blocks not answered by tool_result blocks at the start of the next user
 * message, and tool_result blocks that answer no tool_use of the message before; it takes a while to answer.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { latency, requestTokens, type FakeModelOptions } from './fake-openai';
import { pieces, writeStream } from './fake-stream';

type CacheControl = { cache_control?: { type: 'ephemeral' } };
export type AnthropicBlock = (
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: unknown; is_error?: boolean }
) &
  CacheControl;

export interface MessagesRequest {
  model: string;
  system?: string | ({ type: 'text'; text: string } & CacheControl)[];
  max_tokens: number;
  messages: { role: 'user' | 'assistant'; content: string | AnthropicBlock[] }[];
  tools?: { name: string }[];
  stream?: boolean;
}

export type AnthropicReply =
  | { hang: true }
  | { status: number; body: unknown }
  | { text: string }
  | { toolCalls: { id: string; name: string; args: unknown }[] };

export class FakeAnthropic {
  readonly requests: MessagesRequest[] = [];
  readonly apiKeys: string[] = [];
  readonly refusals: { index: number; message: string }[] = [];
  /** Requests refused as longer than `contextTokens`, by index. */
  readonly contextRefusals: number[] = [];
  /** Prompt caching as Anthropic's: the prefixes written at cache breakpoints, and each answer's usage. */
  private readonly cached = new Set<string>();
  readonly usages: {
    input_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
  }[] = [];
  private server: Server | undefined;
  url = '';

  constructor(
    private readonly reply: (request: MessagesRequest, index: number) => AnthropicReply,
    private readonly options: FakeModelOptions = {},
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/messages') {
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify(errorBody('not_found_error', 'Not found')));
          return;
        }
        const request = JSON.parse(raw) as MessagesRequest;
        this.requests.push(request);
        this.apiKeys.push((req.headers['x-api-key'] as string | undefined) ?? '');
        const index = this.requests.length - 1;
        const invalid = validateMessages(request.messages) ?? validateCacheControl(request);
        if (invalid) this.refusals.push({ index, message: invalid });
        const tokens = requestTokens(raw);
        const limit = this.options.contextTokens;
        if (limit !== undefined && tokens > limit) this.contextRefusals.push(index);
        const reply: AnthropicReply =
          limit !== undefined && tokens > limit
            ? {
                status: 400,
                body: errorBody(
                  'invalid_request_error',
                  `prompt is too long: ${tokens} tokens > ${limit} maximum`,
                ),
              }
            : invalid
              ? { status: 400, body: errorBody('invalid_request_error', invalid) }
              : this.reply(request, index);
        if ('hang' in reply) return;
        setTimeout(() => this.answer(res, request, reply), latency(this.options.latency));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this;
  }

  /**
   * The request's input as Anthropic counts it with prompt caching: the longest prefix (tools, system, then blocks
   * in order) that an earlier request wrote at a breakpoint is read from the cache; up to this request's last
   * breakpoint the rest is written; after it, plain input. Prefixes under 1,024 tokens are never cached.
   */
  private cacheUsage(request: MessagesRequest) {
    const total = requestTokens(JSON.stringify(request));
    const prefix: unknown[] = [
      request.tools ?? [],
      typeof request.system === 'string' ? [request.system] : (request.system ?? []).map((b) => b.text),
    ];
    const boundaries: { key: string; tokens: number; breakpoint: boolean }[] = [];
    const at = (breakpoint: boolean) => {
      const key = JSON.stringify(prefix, (k, v: unknown) => (k === 'cache_control' ? undefined : v));
      boundaries.push({ key, tokens: requestTokens(key), breakpoint });
    };
    at(Array.isArray(request.system) && request.system.some((b) => b.cache_control));
    for (const message of request.messages)
      for (const block of typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : message.content) {
        prefix.push([message.role, block]);
        at('cache_control' in block && block.cache_control !== undefined);
      }
    const read = Math.max(
      0,
      ...boundaries.filter((b) => b.tokens >= 1024 && this.cached.has(b.key)).map((b) => b.tokens),
    );
    const lastBreakpoint = Math.max(0, ...boundaries.filter((b) => b.breakpoint).map((b) => b.tokens));
    for (const b of boundaries) if (b.breakpoint && b.tokens >= 1024) this.cached.add(b.key);
    const written = lastBreakpoint >= 1024 ? Math.max(0, lastBreakpoint - read) : 0;
    return {
      input_tokens: Math.max(0, total - read - written),
      cache_read_input_tokens: read,
      cache_creation_input_tokens: written,
    };
  }

  private answer(
    res: ServerResponse,
    request: MessagesRequest,
    reply: Exclude<AnthropicReply, { hang: true }>,
  ) {
    if (res.destroyed) return;
    if ('status' in reply) {
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
      return;
    }
    const content: (
      { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown }
    )[] =
      'text' in reply
        ? [{ type: 'text', text: reply.text }]
        : reply.toolCalls.map((call) => ({
            type: 'tool_use' as const,
            id: call.id,
            name: call.name,
            input: call.args,
          }));
    const usage = {
      ...this.cacheUsage(request),
      output_tokens: Math.ceil(JSON.stringify(content).length / 4),
    };
    this.usages.push(usage);
    if (request.stream)
      return void this.stream(res, request, content, usage, 'text' in reply ? 'end_turn' : 'tool_use');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `msg_${this.requests.length}`,
        type: 'message',
        role: 'assistant',
        model: request.model,
        content,
        stop_reason: 'text' in reply ? 'end_turn' : 'tool_use',
        stop_sequence: null,
        usage,
      }),
    );
  }

  /** `stream: true`: message_start, each block's start, deltas and stop, message_delta (usage), message_stop. */
  private async stream(
    res: ServerResponse,
    request: MessagesRequest,
    content: (
      { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown }
    )[],
    usage: {
      input_tokens: number;
      output_tokens: number;
      cache_read_input_tokens: number;
      cache_creation_input_tokens: number;
    },
    stopReason: string,
  ) {
    const event = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, ...data } });
    const events = [
      event('message_start', {
        message: {
          id: `msg_${this.requests.length}`,
          type: 'message',
          role: 'assistant',
          model: request.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: usage.input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            output_tokens: 1,
          },
        },
      }),
      ...content.flatMap((block, index) =>
        block.type === 'text'
          ? [
              event('content_block_start', { index, content_block: { type: 'text', text: '' } }),
              ...pieces(block.text).map((text) =>
                event('content_block_delta', { index, delta: { type: 'text_delta', text } }),
              ),
              event('content_block_stop', { index }),
            ]
          : [
              event('content_block_start', {
                index,
                content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
              }),
              ...pieces(JSON.stringify(block.input), 12).map((partial_json) =>
                event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
              ),
              event('content_block_stop', { index }),
            ],
      ),
      event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      }),
      event('message_stop', {}),
    ];
    await writeStream(res, events, this.options.streamGapMs ?? 25);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

function errorBody(type: string, message: string) {
  return { type: 'error', error: { type, message }, request_id: `req_fake${Date.now()}` };
}

const blocksOf = (content: string | AnthropicBlock[]): AnthropicBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;

/**
 * The Messages API's tool pairing rules, with its own messages: every tool_use of an assistant message has
 * a tool_result in the next (user) message, and those results come first in it; every tool_result answers a
 * tool_use of the message right before it. Empty text blocks are refused too.
 */
/** As the API: at most four blocks with cache_control in one request. */
function validateCacheControl(request: MessagesRequest): string | undefined {
  const blocks = [
    ...(Array.isArray(request.system) ? request.system : []),
    ...request.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)),
  ];
  const marked = blocks.filter((b) => b.cache_control !== undefined).length;
  return marked > 4
    ? `A maximum of 4 blocks with cache_control may be provided. Found ${marked}.`
    : undefined;
}

export function validateMessages(messages: MessagesRequest['messages']): string | undefined {
  for (const [index, message] of messages.entries()) {
    const blocks = blocksOf(message.content);
    const empty = blocks.findIndex((block) => block.type === 'text' && block.text === '');
    if (empty >= 0) return `messages.${index}.content.${empty}.text: text content blocks must be non-empty`;
    const previous = index > 0 ? blocksOf(messages[index - 1]!.content) : [];
    const uses = new Set(
      messages[index - 1]?.role === 'assistant'
        ? previous.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
        : [],
    );
    for (const [at, block] of blocks.entries())
      if (block.type === 'tool_result' && (message.role !== 'user' || !uses.has(block.tool_use_id)))
        return `messages.${index}.content.${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    if (message.role !== 'assistant') continue;
    const ids = blocks.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
    if (!ids.length) continue;
    const next = messages[index + 1];
    const leading: string[] = [];
    for (const block of next?.role === 'user' ? blocksOf(next.content) : []) {
      if (block.type !== 'tool_result') break;
      leading.push(block.tool_use_id);
    }
    const missing = ids.filter((id) => !leading.includes(id));
    if (missing.length)
      return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  return undefined;
}

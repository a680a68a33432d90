/** `anthropic`: the Messages API with tool use. */
import Anthropic from '@anthropic-ai/sdk';
import type { Message } from '../../workflows/session/contract';
import type { ModelReply } from '../types';
import { retryAfterOf } from './classify-error';
import { callProvider, offeredTools, SDK_CLIENT_OPTIONS } from './provider-call';
import type { CompleteFn } from './complete-fn';
import { requestOrder } from './request-order';
import { countedUsage, estimatedUsage } from './usage';

type Block = Anthropic.ContentBlockParam;

export function createAnthropicModel(options: {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  systemPrompt: string;
}): CompleteFn {
  const client = new Anthropic({
    apiKey: options.apiKey ?? 'not-set',
    ...SDK_CLIENT_OPTIONS,
    ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
  });
  return async function complete(transcript, signal, extraTools = [], onText): Promise<ModelReply> {
    const params = {
      model: options.model,
      max_tokens: 4096,
      // Cache breakpoints: the tools and the system prompt (the same on every call), and the conversation so far.
      system: [
        { type: 'text' as const, text: options.systemPrompt, cache_control: { type: 'ephemeral' as const } },
      ],
      messages: withCacheBreakpoints(toAnthropic(transcript)),
      tools: offeredTools(extraTools, (spec) => ({
        name: spec.name,
        description: spec.description,
        input_schema: spec.parameters as Anthropic.Tool.InputSchema,
      })),
    };
    const response = await callProvider<Anthropic.Message>({
      provider: 'anthropic',
      model: options.model,
      signal,
      onText,
      streamed: (requestOptions, onSnapshot) => {
        const stream = client.messages.stream(params, requestOptions);
        // The SDK's snapshot is per text block: the answer so far is every block's text together.
        let written = '';
        stream.on('text', (delta) => onSnapshot((written += delta)));
        return stream.finalMessage();
      },
      whole: (requestOptions) => client.messages.create(params, requestOptions),
      apiError: (error) =>
        error instanceof Anthropic.APIError
          ? { status: error.status, message: error.message, retryAfterMs: retryAfterOf(error.headers) }
          : undefined,
    });
    // A server that sends no usage (some proxies) is estimated rather than left uncounted.
    const usage = response.usage as Partial<Anthropic.Usage> | undefined;
    const counted = countedUsage(
      // Cached prompt tokens are billed input too (reads at the policy's cachedInput price, writes at input).
      usage?.input_tokens === undefined
        ? undefined
        : usage.input_tokens +
            (usage.cache_creation_input_tokens ?? 0) +
            (usage.cache_read_input_tokens ?? 0),
      usage?.output_tokens,
      usage?.cache_read_input_tokens ?? undefined,
    );
    return {
      usage: counted ?? estimatedUsage(transcript, response.content),
      text: response.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n'),
      toolCalls: response.content.flatMap((block) =>
        block.type === 'tool_use' ? [{ id: block.id, name: block.name, args: block.input }] : [],
      ),
    };
  };
}

/**
 * Two cache breakpoints in the conversation (with the system prompt's, three of Anthropic's four): the end of the
 * request, written for the next call, and the end of the previous call's request (two messages back: the answer and
 * the new message or tool results came after it), which that call wrote, read now. Everything before them is the
 * same on every call of a conversation (the transcript is append-only), so each call reads its prefix from the cache
 * and pays full price only for what was added.
 */
export function withCacheBreakpoints(messages: Anthropic.MessageParam[]): Anthropic.MessageParam[] {
  const marked = new Set([messages.length - 1, messages.length - 3].filter((i) => i >= 0));
  return messages.map((message, index) => {
    if (!marked.has(index) || typeof message.content === 'string' || !message.content.length) return message;
    const content = [...message.content];
    content[content.length - 1] = {
      ...content[content.length - 1],
      cache_control: { type: 'ephemeral' },
    } as (typeof content)[number];
    return { ...message, content } as Anthropic.MessageParam;
  });
}

/**
 * Anthropic wants each assistant's tool_use answered by tool_result blocks at the start of the next user
 * turn, and alternating roles: results and a following user text merge into one user turn, results first.
 */
export function toAnthropic(transcript: Message[]): Anthropic.MessageParam[] {
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of requestOrder(transcript)) {
    if (message.role === 'user') push('user', [{ type: 'text', text: message.text }]);
    else if (message.role === 'tool') {
      push('user', [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: message.content,
          is_error: message.status !== 'ok',
        },
      ]);
    } else {
      const blocks: Block[] = message.text ? [{ type: 'text', text: message.text }] : [];
      for (const call of message.toolCalls) {
        blocks.push({
          type: 'tool_use',
          id: call.id,
          name: call.name,
          input: typeof call.args === 'object' && call.args !== null ? call.args : { raw: call.args },
        });
      }
      push('assistant', blocks.length ? blocks : [{ type: 'text', text: '(no answer)' }]);
    }
  }
  return out;
}

/** The shape every model provider has (scripted, OpenAI, Anthropic), and what summarising calls. */
import type { Message } from '../../workflows/session/contract';
import type { ModelReply } from '../types';
import type { ToolSpec } from './tool-specs';

/** `signal` aborts the request when the activity is cancelled (its workflow was cancelled or terminated). */
export type CompleteFn = (
  transcript: Message[],
  signal?: AbortSignal,
  /** Tools beyond the built-ins (MCP servers' tools, discovered for this session). */
  extraTools?: ToolSpec[],
  /** Streams the answer: called with the text so far as it is written (never with tool calls). */
  onText?: (snapshot: string) => void,
  options?: CallOptions,
) => Promise<ModelReply>;

export interface CallOptions {
  /** `provider:model` that must answer (no fallback), when the call goes on with a tool step it started. */
  only?: string;
  /** The conversation's prompt-cache key (its workflow id): its calls share a cached prefix. */
  cacheKey?: string;
}

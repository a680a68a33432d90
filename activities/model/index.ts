/** The model activity: one function, three providers chosen by MODEL_PROVIDER. */
import { modelNameOf, type AppConfig } from '../../infra/config';
import type { Message } from '../../workflows/session/contract';
import type { ModelReply } from '../types';
import { bounded, MAX_TOOL_ARGS_CHARS } from '../../workflows/session/transcript';
import { costOf, type Price } from '../../common/budgets';
import { scriptedModel, writeOut } from './scripted';
import { estimatedUsage } from './usage';
import type { CompleteFn } from './complete-fn';
import { fallbackChain } from './fallback';
import { countModelFailure, countModelFallback } from '../metrics';
import type { Logger } from '../../infra/log';
import { DEFAULT_SYSTEM_PROMPT, toolSpecs } from './tool-specs';

export type { CompleteFn } from './complete-fn';

/**
 * What every request spends before the first message: the system prompt and the built-in tools' JSON schemas.
 * Counted at 3.5 characters a token, a little pessimistic for JSON, so the window errs on the small side.
 */
export function requestOverheadTokens(config: AppConfig): number {
  const systemPrompt = config.policy.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  return Math.ceil((systemPrompt.length + JSON.stringify(toolSpecs()).length) / 3.5);
}

export function createModel(config: AppConfig, log?: Logger): CompleteFn {
  const primary = { provider: config.model.provider, name: modelNameOf(config.model) };
  // The same labels as modelLabels(config.model), which a fork's chosen model is checked against.
  const links = [primary, ...config.model.fallbacks].map((model) => ({
    label: `${model.provider}:${model.name}`,
    complete: providerModel(config, model),
  }));
  return fallbackChain(links, {
    onFallback: (from, to, error, details) => {
      log?.warn('model fell back', { from, to, why: error.message.slice(0, 300) });
      countModelFallback(from, to, details.status);
    },
    onFailure: countModelFailure,
  });
}

/** One provider's model. */
function providerModel(
  config: AppConfig,
  model: { provider: AppConfig['model']['provider']; name: string },
): CompleteFn {
  const systemPrompt = config.policy.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  switch (model.provider) {
    case 'scripted':
      return async (transcript, signal, _extraTools, onText) => {
        const reply = withEstimatedUsage(scriptedModel(transcript), transcript);
        // Answers (not tool calls) are written out word by word, as a real model streams them.
        if (onText && reply.text && !reply.toolCalls.length)
          await writeOut(reply.text, onText, config.model.scriptedWordMs, signal);
        return reply;
      };
    // A provider's SDK is loaded only when it is the one configured (each takes 0.2 s of a worker's start).
    case 'openai':
      return lazyModel(
        import('./openai.js').then(({ createOpenAiModel }) =>
          createOpenAiModel({
            baseUrl: config.model.openaiBaseUrl,
            apiKey: config.model.openaiApiKey,
            model: model.name,
            systemPrompt,
          }),
        ),
      );
    case 'anthropic':
      return lazyModel(
        import('./anthropic.js').then(({ createAnthropicModel }) =>
          createAnthropicModel({
            baseUrl: config.model.anthropicBaseUrl,
            apiKey: config.model.anthropicApiKey,
            model: model.name,
            systemPrompt,
          }),
        ),
      );
  }
}

/**
 * The scripted model has no provider to report usage, so it estimates it like a real one would count it:
 * budgets, the usage line and the search attributes work in the default install too.
 */
function withEstimatedUsage(reply: ModelReply, transcript: Message[]): ModelReply {
  return { ...reply, usage: estimatedUsage(transcript, [reply.text, reply.toolCalls]) };
}

/** A model whose SDK is still loading: calls wait for it (a failed load fails the call, as a broken SDK would). */
function lazyModel(loading: Promise<CompleteFn>): CompleteFn {
  loading.catch(() => {}); // surfaced by the first call, not as an unhandled rejection at start
  return async (...args) => await (await loading)(...args);
}

/** The reply's usage priced with the policy's `prices` entry for the model (no entry: tokens only). */
export function pricedReply(reply: ModelReply, price: Price | undefined): ModelReply {
  const costUsd = reply.usage && costOf(reply.usage, price);
  return costUsd === undefined ? reply : { ...reply, usage: { ...reply.usage!, costUsd } };
}

/**
 * A reply becomes an activity result in the workflow's history: its text is bounded, and a tool call whose
 * arguments are huge keeps only their length (the workflow answers it with an error the model can act on).
 */
export function boundedReply(reply: ModelReply): ModelReply {
  return {
    ...(reply.usage ? { usage: reply.usage } : {}),
    ...(reply.streamRef ? { streamRef: reply.streamRef } : {}),
    ...(reply.model ? { model: reply.model } : {}),
    text: bounded(reply.text),
    toolCalls: reply.toolCalls.map((call) => {
      const size = (typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? null)).length;
      return size > MAX_TOOL_ARGS_CHARS
        ? { id: call.id, name: call.name, args: {}, argsTooLarge: size }
        : call;
    }),
  };
}

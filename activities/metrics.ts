/**
 * The product's metrics from activities (docs/OPERATIONS.md "Metrics"), through the SDK's activity meter: exported
 * by the worker's Prometheus endpoint beside the SDK's own (WORKER_METRICS_ADDRESS; without it they go nowhere).
 * Labels are low-cardinality: the model (`provider:model`), the token kind, the tool's name and its outcome.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, type MetricMeter } from '@temporalio/common';
import type { ModelUsage } from '../common/budgets';
import type { KillReason } from './tools/shell';

/** The activity's meter; none outside an activity (a unit test calling the code directly counts nothing). */
function meter(): MetricMeter | undefined {
  try {
    return Context.current().metricMeter;
  } catch {
    return undefined;
  }
}

/** A model call's usage: tokens by kind, and its cost, by the model that answered. */
export function countModelUsage(model: string, usage: ModelUsage | undefined): void {
  if (!usage) return;
  const meter = Context.current().metricMeter;
  const tokens = meter.createCounter('agent_model_tokens', 'tokens', 'Model tokens, by model and kind');
  const cached = usage.cachedInputTokens ?? 0;
  tokens.add(usage.inputTokens - cached, { model, kind: 'input' });
  if (cached) tokens.add(cached, { model, kind: 'cached_input' });
  tokens.add(usage.outputTokens, { model, kind: 'output' });
  if (usage.costUsd)
    meter
      .createCounter('agent_model_cost_usd', 'usd', 'Model cost in US dollars (policy prices), by model')
      .add(usage.costUsd, { model });
}

/** A tool run's outcome (ok, error, denied, …), by tool name. */
export function countToolRun(tool: string, outcome: string): void {
  Context.current()
    .metricMeter.createCounter('agent_tool_runs', 'runs', 'Tool runs, by tool and outcome')
    .add(1, { tool, outcome });
}

/**
 * Why a fallback happened, from the capacity failure's HTTP status: rate_limited (429), timeout (408), unavailable
 * (5xx, 529 "overloaded") or network (no answer at all).
 */
function fallbackReason(status: number | undefined): string {
  if (status === undefined) return 'network';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  return 'unavailable';
}

/** A model could not answer for lack of capacity and the next of MODEL_FALLBACKS was asked. */
export function countModelFallback(from: string, to: string, status: number | undefined): void {
  meter()
    ?.createCounter(
      'agent_model_fallbacks',
      'calls',
      'Model calls passed to the next model, by from, to and reason',
    )
    .add(1, { from, to, reason: fallbackReason(status) });
}

/** A model call that failed, by model and failure type (ModelUnavailable, ModelAuthError, ContextTooLong, …). */
export function countModelFailure(model: string, error: Error): void {
  const type = error instanceof ApplicationFailure ? (error.type ?? 'ApplicationFailure') : 'Error';
  meter()
    ?.createCounter('agent_model_failures', 'calls', 'Model calls that failed, by model and failure type')
    .add(1, { model, type });
}

/**
 * Counts a shell command killed: by its timeout, a Stop (or cancelled activity), or its launcher ending under it.
 * Taken while the activity runs: the kill is told later, from the launcher's channel, outside the activity's context.
 */
export function sandboxKillCounter(sandbox: string): (reason: KillReason) => void {
  const kills = meter()?.createCounter(
    'agent_sandbox_kills',
    'commands',
    'Shell commands killed, by reason and sandbox',
  );
  return (reason) => kills?.add(1, { reason, sandbox });
}

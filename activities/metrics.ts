/**
 * The product's metrics from activities (docs/OPERATIONS.md "Metrics"), through the SDK's activity meter: exported
 * by the worker's Prometheus endpoint beside the SDK's own (WORKER_METRICS_ADDRESS; without it they go nowhere).
 * Labels are low-cardinality: the model (`provider:model`), the token kind, the tool's name and its outcome.
 */
import { Context } from '@temporalio/activity';
import type { ModelUsage } from '../common/budgets';

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

/**
 * Token and cost budgets as pure functions: what a model call spent (from the provider's usage fields, priced
 * with the policy's table), running totals, and which configured limit a total has reached. The session opens
 * a budget gate when one is reached (workflows/session/budget.ts); approving it adds one more allowance of
 * that limit. Shared by workflows, activities, gateways and agentctl, so it imports nothing.
 */

/** What one model call spent. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those the provider read from its prompt cache (billed at the cached rate). */
  cachedInputTokens?: number;
  /** In US dollars, from the policy's `prices` for the model; absent when the model has no price there. */
  costUsd?: number;
}

/** A running total. */
export interface Spend {
  tokens: number;
  costUsd: number;
  /** Model calls counted. */
  calls: number;
  /** Of `tokens`, input read from the providers' prompt caches (absent before caching was counted). */
  cachedTokens?: number;
}

/** A person's spend on one UTC day, across conversations, and where their daily limit was last continued. */
export interface DaySpend extends Spend {
  /** Budget gates of the daily limit approved that day. */
  raises: number;
  continuedAt?: Continued;
}

/** A limit in dollars, tokens or both (whichever is reached first). */
export interface Limit {
  usd?: number | undefined;
  tokens?: number | undefined;
}

/** The policy file's `budgets`. A mission run counts against `perMissionRun` instead of `perConversation`. */
export interface Budgets {
  perTurn?: Limit | undefined;
  perConversation?: Limit | undefined;
  perPersonPerDay?: Limit | undefined;
  perMissionRun?: Limit | undefined;
  /** May the person who reached a limit approve more themselves (default true), or only an approver? */
  selfApprove?: boolean | undefined;
}

/** Per million tokens, in US dollars: the policy file's `prices` entry of one model. */
export interface Price {
  input: number;
  output: number;
  /** Input read from the prompt cache (absent: the input price). */
  cachedInput?: number;
}

export type BudgetScope = 'turn' | 'conversation' | 'missionRun' | 'day';

export const NO_SPEND: Spend = { tokens: 0, costUsd: 0, calls: 0 };

export function costOf(
  usage: { inputTokens: number; outputTokens: number; cachedInputTokens?: number },
  price: Price | undefined,
) {
  if (!price) return undefined;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  return (
    ((usage.inputTokens - cached) * price.input +
      cached * (price.cachedInput ?? price.input) +
      usage.outputTokens * price.output) /
    1_000_000
  );
}

export function addUsage(spend: Spend, usage: ModelUsage | undefined): Spend {
  if (!usage) return spend;
  return {
    tokens: spend.tokens + usage.inputTokens + usage.outputTokens,
    costUsd: spend.costUsd + (usage.costUsd ?? 0),
    calls: spend.calls + 1,
    ...(spend.cachedTokens !== undefined || usage.cachedInputTokens
      ? { cachedTokens: (spend.cachedTokens ?? 0) + (usage.cachedInputTokens ?? 0) }
      : {}),
  };
}

/** "$4.80"; under a dollar with up to four decimals ("$0.0123"), so small spends do not read as $0.00. */
export function formatUsd(usd: number): string {
  if (usd >= 1 || usd === 0) return `$${usd.toFixed(2)}`;
  return `$${usd.toPrecision(3).replace(/0+$/, '').replace(/\.$/, '')}`;
}

export function formatTokens(tokens: number): string {
  return `${tokens.toLocaleString('en-US')} token${tokens === 1 ? '' : 's'}`;
}

/** "12,345 tokens · $0.05" (the cost only when a price is configured). */
export function formatSpend(spend: Spend): string {
  return spend.costUsd > 0
    ? `${formatTokens(spend.tokens)} · ${formatUsd(spend.costUsd)}`
    : formatTokens(spend.tokens);
}

/** Where a limit was last continued (the spend when its budget gate was approved). */
export interface Continued {
  tokens: number;
  costUsd: number;
}

export interface BudgetCheck {
  scope: BudgetScope;
  spend: Spend;
  limit: Limit | undefined;
  /** Set once a budget gate of this scope was approved: the limit then counts from that spend on. */
  continuedAt: Continued | undefined;
}

export interface ReachedLimit {
  scope: BudgetScope;
  /** What was reached, e.g. "$4.80 of $5.00" or "201,000 of 200,000 tokens". */
  used: string;
  /** What approving adds, e.g. "$5.00" or "200,000 tokens". */
  more: string;
}

/**
 * The first check whose spend has reached its limit, or undefined. Approving a budget gate allows one more
 * limit's worth from what was spent then ("continue with $5.00 more"), however far past the limit that was.
 */
export function reachedLimit(checks: readonly BudgetCheck[]): ReachedLimit | undefined {
  for (const { scope, spend, limit, continuedAt } of checks) {
    if (!limit) continue;
    const from = continuedAt ?? { tokens: 0, costUsd: 0 };
    if (limit.usd !== undefined && spend.costUsd - from.costUsd >= limit.usd)
      return {
        scope,
        used: `${formatUsd(spend.costUsd)} of ${formatUsd(from.costUsd + limit.usd)}`,
        more: formatUsd(limit.usd),
      };
    if (limit.tokens !== undefined && spend.tokens - from.tokens >= limit.tokens)
      return {
        scope,
        used: `${spend.tokens.toLocaleString('en-US')} of ${formatTokens(from.tokens + limit.tokens)}`,
        more: formatTokens(limit.tokens),
      };
  }
  return undefined;
}

/** The point a continued budget counts from: what was spent when its gate was approved. */
export const continuedFrom = (spend: Spend): Continued => ({ tokens: spend.tokens, costUsd: spend.costUsd });

const SCOPE_WORDS: Record<BudgetScope, (who: string) => string> = {
  turn: () => 'This turn has used',
  conversation: () => 'This conversation has used',
  missionRun: () => 'This mission run has used',
  day: (who) => `@${who} has used`,
};

/** The budget gate's question: "This conversation has used $4.80 of $5.00. Continue with $5.00 more?" */
export function budgetQuestion(reached: ReachedLimit, requesterId: string): string {
  const today = reached.scope === 'day' ? ' today (UTC)' : '';
  return `${SCOPE_WORDS[reached.scope](requesterId)} ${reached.used}${today}. Continue with ${reached.more} more?`;
}

/** The UTC day a spend counts for, "2026-11-25" (per-person budgets reset at midnight UTC). */
export function spendDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

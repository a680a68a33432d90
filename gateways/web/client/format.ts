/** Times, spend and outcomes in words: what the page shows next to the workflow's own data. */
import { describeOutcome, grantWords, type Voice } from '../../../common/gates/words';
import type { Spend, WebGate } from './types';

export const time = (at: number) =>
  new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/** "today 14:05", "yesterday", "3 Nov": a conversation's date in the list. */
export function day(iso: string, now = new Date()): string {
  const at = new Date(iso);
  const days = Math.floor((now.setHours(0, 0, 0, 0) - new Date(at).setHours(0, 0, 0, 0)) / 86_400_000);
  if (days <= 0) return `today ${time(at.getTime())}`;
  if (days === 1) return 'yesterday';
  return at.toLocaleDateString([], { day: 'numeric', month: 'short' });
}

/** "3 min", "2 h", "4 days": how long something has waited. */
export function waited(since: number, now = Date.now()): string {
  const minutes = Math.max(0, Math.round((now - since) / 60_000));
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.round(hours / 24)} days`;
}

// "12,345 tokens · $0.05" (common/budgets.ts formatSpend): what this conversation's model calls used.
export function spendText(usage: Spend): string {
  const tokens = `${usage.tokens.toLocaleString('en-US')} tokens`;
  if (!(usage.costUsd > 0)) return tokens;
  const usd =
    usage.costUsd >= 1 ? usage.costUsd.toFixed(2) : usage.costUsd.toPrecision(3).replace(/\.?0+$/, '');
  return `${tokens} · $${usd}`;
}

/** The web's voice: local times (the chat and agentctl write UTC). */
const WEB_VOICE: Voice = { mention: (id) => `@${id}`, time };

/**
 * A gate's outcome in one line, in the words every channel uses (common/gates/words.ts): what happened, who, when;
 * then why (the reason, quoted) and what a grant covers. The page starts it with a capital, as a line of its own.
 */
export function outcomeLine(gate: WebGate): string {
  const words = describeOutcome(gate, WEB_VOICE);
  const r = gate.resolution;
  const why = r?.reason ? ` — “${r.reason}”` : '';
  const grant = r?.grant ? ` (${grantWords(r.grant)})` : '';
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}${why}${grant}`;
}

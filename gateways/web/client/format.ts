/** Times, spend and outcomes in words: what the page shows next to the workflow's own data. */
import type { GateOutcome, Question, Spend, WebGate } from './types';

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

/** A decided gate in one line: what happened, who, when, why. */
export function describeOutcome(gate: WebGate): string {
  const r = gate.resolution;
  if (!r) return 'Waiting for a decision';
  const budget = gate.kind === 'approval' && gate.toolName === 'budget';
  const provider = gate.kind === 'credential' ? gate.providerName : '';
  const words: Record<GateOutcome, string> = {
    approved: budget ? 'Continued' : 'Approved',
    edited: 'Edited & approved',
    always: 'Always allowed',
    denied: budget ? 'Stopped' : 'Denied',
    answered: 'Answered',
    connected: `${provider} connected`,
    expired:
      gate.kind === 'question'
        ? 'Expired: nobody answered'
        : gate.kind === 'credential'
          ? `Expired: ${provider} was not connected`
          : 'Expired: nobody decided',
    superseded: 'Not run: superseded by a new message',
    stopped: 'Stopped',
    cancelled: 'Cancelled',
  };
  const who = r.by && r.by !== 'system' ? ` by @${r.by}` : '';
  const grant = r.grant
    ? ` (${r.grant.pattern ? `"${r.grant.pattern}"` : 'every call'}, ${r.grant.scope === 'user' ? 'everywhere' : 'in this conversation'})`
    : '';
  return `${words[r.outcome]}${who} at ${time(r.at)}${r.reason ? ` — “${r.reason}”` : ''}${grant}`;
}

/** Mirrors typedAnswerHint in common/tools/ask-user.ts: how to answer by typing in the chat instead. */
export function typedAnswerHint(questions: Question[]): string {
  const numbers = (q: Question, i: number) =>
    q.options.length
      ? `${i + 1}: ${q.multi_select && q.options.length > 1 ? '1,2' : '1'}`
      : `${i + 1}: your answer`;
  const q = questions[0];
  if (questions.length === 1 && q) {
    if (!q.options.length) return 'Or type "other: your answer" in the chat.';
    return `Or type ${q.multi_select ? 'option numbers, e.g. "1,3"' : 'an option number'}${q.allow_custom ? ', or "other: your answer"' : ''} in the chat.`;
  }
  return `Or type "question: answer" for each in the chat, e.g. "${questions.map(numbers).join('; ')}".`;
}

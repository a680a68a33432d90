/**
 * Every word a person reads about a gate, once, for every channel: what was decided (outcomes), who may decide (the
 * rule line and approval progress), what a conversation waits for, the "Always allow" label and how to answer by
 * typing. The workflow, Slack, Discord, agentctl and the web client import it alike; a channel decides layout (how a
 * mention or a time is written, bold, capitals, where a line goes), never words. Pure, with type imports only, so the
 * browser bundle takes it as it is.
 */
import type { Grant } from '../grants';
import type { Question } from '../tools/ask-user';
import type { ApprovalGate, Gate, GateOutcome } from '../../workflows/session/contract';
import { approvalRules, approverIds, isProtected, onePerPerson, personOn } from './deciders';
import { whereDecided } from '../chat-ids';

/** How a channel writes a person and a time: the only things about words it chooses. */
export interface Voice {
  mention: (id: string) => string;
  time: (at: number) => string;
}

/** "14:05 UTC": workflow time is UTC; the web chat writes local times from the same timestamps. */
export function clock(at: number): string {
  return `${new Date(at).toISOString().slice(11, 16)} UTC`;
}

/** Mentions as `@name`, times in UTC: the workflow's own messages, agentctl, and channels without their own. */
export const PLAIN_VOICE: Voice = { mention: (id) => `@${id}`, time: clock };

/**
 * The pseudo-tool of a budget gate: an approval of more spending, not of a tool call. No tool has this name; its
 * "call" is not in the transcript, and it offers only Continue (approve) and Stop (deny).
 */
export const BUDGET_GATE = 'budget';

export function isBudgetGate(gate: { kind: string; toolName: string }): boolean {
  return gate.kind === 'approval' && gate.toolName === BUDGET_GATE;
}

/** "shell_execute call", or "budget" for a budget gate: what a refused click is told it clicked on. */
export function decidedThing(gate: { kind: string; toolName: string }): string {
  return isBudgetGate(gate) ? 'budget' : `${gate.toolName} call`;
}

/** Everyone who may decide (or answer) a gate, as mentions: the requester and the configured approvers. */
export function decidersList(gate: Gate, mention: Voice['mention'] = PLAIN_VOICE.mention): string {
  return onePerPerson(gate, [gate.requesterId, ...gate.approvers])
    .map(mention)
    .join(', ');
}

/**
 * A gate's prompt in one line, the headline every channel puts above its buttons or form: "Approval needed:
 * `shell_execute` requested by @alice", "Budget reached: …", "Question from `ask_user`", "Connect Acme Files".
 */
export function promptHeadline(gate: Gate, voice: Voice = PLAIN_VOICE): string {
  if (gate.kind === 'approval')
    return isBudgetGate(gate)
      ? `Budget reached: ${gate.subject}`
      : `Approval needed: ${gate.toolName} requested by ${voice.mention(gate.requesterId)}`;
  if (gate.kind === 'credential')
    return `Connect ${gate.providerName}: ${gate.toolName} needs ${voice.mention(gate.requesterId)}'s sign-in`;
  return gate.asks
    ? `${gate.asks.server} asks ${voice.mention(gate.requesterId)}: ${gate.asks.message}`
    : `Question for ${decidersList(gate, voice.mention)}`;
}

/** What a decision on a gate that is no longer open is told: "This shell_execute call was already approved by @bob at …". */
export function alreadyDecided(gate: Gate, voice: Voice = PLAIN_VOICE): string {
  const thing =
    gate.kind === 'approval'
      ? decidedThing(gate)
      : gate.kind === 'question'
        ? 'question'
        : `${gate.providerName} sign-in`;
  return `This ${thing} was already ${describeOutcome(gate, voice, { where: true })}.`;
}

/** An approval's two buttons: a budget's more spending is continued or stopped, a call approved or denied. */
export function choiceLabels(budget: boolean): { approve: string; deny: string } {
  return budget ? { approve: 'Continue', deny: 'Stop' } : { approve: 'Approve', deny: 'Deny' };
}

const OUTCOME_WORDS: Record<GateOutcome, string> = {
  approved: 'approved',
  edited: 'edited and approved',
  always: 'always allowed',
  denied: 'denied',
  answered: 'answered',
  connected: 'connected',
  expired: 'expired',
  superseded: 'superseded',
  stopped: 'stopped',
  cancelled: 'cancelled',
};

/**
 * What happened to a gate, in one line ("approved by @alice at 14:05 UTC"), or what it still waits for. Lower case:
 * it follows a tool's name in messages; a channel that shows it alone starts it with a capital.
 */
export function describeOutcome(
  gate: Gate,
  voice: Voice = PLAIN_VOICE,
  options: { where?: boolean } = {},
): string {
  const r = gate.resolution;
  if (!r)
    return gate.kind === 'question'
      ? 'waiting for an answer'
      : gate.kind === 'credential'
        ? `waiting for ${voice.mention(gate.requesterId)} to connect ${gate.providerName}`
        : 'waiting for a decision';
  const at = voice.time(r.at);
  if (r.outcome === 'expired')
    return gate.kind === 'credential'
      ? `expired at ${at}: ${gate.providerName} was not connected in time`
      : `expired at ${at}: nobody ${gate.kind === 'question' ? 'answered' : 'decided'}`;
  if (r.outcome === 'cancelled') return `cancelled at ${at}`;
  if (r.outcome === 'superseded')
    return `not run: superseded by a new message from ${voice.mention(r.by)} at ${at}`;
  const approvers =
    gate.kind === 'approval' && (r.outcome === 'approved' || r.outcome === 'edited')
      ? (gate.approvals ?? [])
      : [];
  const by = approvers.length > 1 ? approvers : [r];
  // "approved by @bob in Slack": where each decider decided, for a click that came too late elsewhere.
  const who = by.map(({ by: id, via }) =>
    options.where ? `${voice.mention(id)} ${whereDecided(id, via)}` : voice.mention(id),
  );
  return `${outcomeWord(gate, r.outcome)} by ${who.join(' and ')} at ${at}`;
}

function outcomeWord(gate: Gate, outcome: GateOutcome): string {
  if (isBudgetGate(gate) && outcome === 'approved') return 'continued';
  if (isBudgetGate(gate) && outcome === 'denied') return 'stopped';
  if (gate.kind === 'question' && outcome === 'denied') return 'declined';
  if (gate.kind === 'credential' && outcome === 'connected') return `${gate.providerName} connected`;
  return OUTCOME_WORDS[outcome];
}

/** What a standing grant covers: `"git status", everywhere` or `every call, in this conversation`. */
export function grantWords(grant: Pick<Grant, 'pattern' | 'scope'>): string {
  return `${grant.pattern ? `“${grant.pattern}”` : 'every call'}, ${grant.scope === 'user' ? 'everywhere' : 'in this conversation'}`;
}

/**
 * An "Always allow" button's label says what it grants: exactly the call shown (its subject, shortened to fit a
 * button; the grant holds the whole of it), here or everywhere.
 */
export function alwaysAllowLabel(subject: string, scope: 'session' | 'user'): string {
  const chars = Array.from(subject.replace(/\s+/g, ' ').trim());
  const shown = chars.length > 40 ? `${chars.slice(0, 39).join('')}…` : chars.join('');
  return `Always allow “${shown}” ${scope === 'user' ? 'everywhere' : 'here'}`;
}

/** "1 of 2 approvals: @bob" for a call that needs several; undefined when one approval decides. */
export function approvalProgress(
  gate: ApprovalGate,
  mention: Voice['mention'] = PLAIN_VOICE.mention,
): string | undefined {
  const { needed, approvals } = approvalRules(gate);
  if (needed <= 1) return undefined;
  // One person is one name, whichever of their ids (channel) they approved from.
  const names = approvals.map((a) => mention(personOn(gate, a.by))).join(', ');
  return `${approvals.length} of ${needed} approvals${names ? `: ${names}` : ''}`;
}

/**
 * Who may decide, in one sentence for every prompt: the deciders by default; under four-eyes or quorum who
 * may approve, how many are needed and what is in, and that nobody can approve when nobody else is configured.
 */
export function decidersLine(gate: ApprovalGate, mention: Voice['mention'] = PLAIN_VOICE.mention): string {
  const { needed, selfApprove, approvals } = approvalRules(gate);
  if (!isProtected(gate) && !gate.delegations?.length)
    return `Who may decide: ${decidersList(gate, mention)}.`;
  const may = approverIds(gate);
  const requester = mention(gate.requesterId);
  // Operators' approvals count too (they are in nobody's list), so they are among the possible approvers.
  const possible = new Set([...may, ...approvals.map((a) => a.by)].map((id) => personOn(gate, id))).size;
  if (possible < needed) {
    const rule =
      needed === 1
        ? `self-approval is off and no approver other than ${requester} is configured`
        : `it needs ${needed} approvals from different people${selfApprove ? '' : ` other than ${requester}`}, and ${may.length ? `only ${may.map(mention).join(', ')} may approve` : 'no approver is configured'}`;
    return `Nobody can approve this call: ${rule}. It can only be denied or expire.`;
  }
  const who = may.map(mention).join(', ');
  const rule =
    needed > 1
      ? `Needs ${needed} approvals from different people among ${who}`
      : `Needs approval from ${who}`;
  const self = selfApprove ? '' : ` (not ${requester}, who asked: they may only deny it)`;
  const progress = approvalProgress(gate, mention);
  return `${rule}${self}.${progress ? ` ${progress}.` : ''}`;
}

/** What open gates wait for, and from whom: the session's status line, the memo and the mission's pause reason. */
export function describeWaiting(gates: readonly Gate[]): string {
  const first = gates[0]!;
  const deciders = (first.kind === 'approval' ? approverIds(first) : [first.requesterId, ...first.approvers])
    .map((name) => `@${name}`)
    .join(' or ');
  if (first.kind === 'credential') return `@${first.requesterId} to connect ${first.providerName}`;
  const what = gates.map((g) =>
    g.kind === 'question'
      ? `an answer to "${g.questions[0]!.label}"`
      : g.kind === 'credential'
        ? `a sign-in to ${g.providerName}`
        : `approval of ${g.toolName} (${g.subject.slice(0, 60)})`,
  );
  return `${what.join(', ')} from ${deciders}`;
}

/** How to decide an approval by typing, with `code` marking what to type (backticks in Slack and Discord). */
export function typedDecisionHint(code: (text: string) => string): string {
  return `You can also reply ${code('approve')} or ${code('deny <reason>')}.`;
}

function singleAnswerHint(question: Question): string {
  if (!question.options.length) return 'Reply "other: your answer"';
  const how = question.multi_select ? 'Reply with numbers, e.g. "1,3"' : 'Reply with a number';
  return `${how}${question.allow_custom ? ', or "other: your answer"' : ''}`;
}

/** How to type the answers to these questions, e.g. `Reply with "question: answer" for each, e.g. "1: 2; 2: 1,3"`. */
export function typedAnswerHint(questions: readonly Question[]): string {
  if (questions.length === 1) return singleAnswerHint(questions[0]!);
  const example = questions
    .map((q, i) =>
      q.options.length
        ? `${i + 1}: ${q.multi_select && q.options.length > 1 ? '1,2' : '1'}`
        : `${i + 1}: your answer`,
    )
    .join('; ');
  const custom = questions.findIndex((q) => q.allow_custom && q.options.length);
  return `Reply with "question: answer" for each, e.g. "${example}"${custom >= 0 ? `, or "${custom + 1}: other: your answer"` : ''}`;
}

/** How a question reads in plain text (for text-only channels and the fallback hint). */
function questionAsText(question: Question): string {
  return [question.prompt, ...optionLines(question, '  '), `${typedAnswerHint([question])}.`].join('\n');
}

function optionLines(question: Question, indent: string): string[] {
  return question.options.map(
    (o, i) => `${indent}${i + 1}. ${o.label}${o.description ? ` — ${o.description}` : ''}`,
  );
}

/**
 * Every question of a gate, numbered, as plain text; `strong` marks each question's header (Markdown
 * bold in Slack and Discord). One question reads as its header, prompt and options; several end with the
 * `1: 2; 2: 1,3` reply format that `parseTextAnswers` reads.
 */
export function questionsAsText(questions: readonly Question[], strong = (text: string) => text): string {
  if (questions.length === 1) return questionAsText(questions[0]!);
  const blocks = questions.map((q, i) => {
    const notes = [
      ...(q.multi_select ? ['several allowed'] : []),
      ...(q.allow_custom ? [q.options.length ? 'or your own words' : 'your own words'] : []),
      ...(q.required ? [] : ['optional']),
    ];
    return [
      `${strong(`${i + 1}. ${q.label}`)}: ${q.prompt}${notes.length ? ` (${notes.join(', ')})` : ''}`,
      ...optionLines(q, '    '),
    ].join('\n');
  });
  return [...blocks, `${typedAnswerHint(questions)}.`].join('\n');
}

/** A sign-in only its requester can give: what anyone else who clicks Connect is told. */
export function onlyRequesterConnects(
  gate: { requesterId: string; providerName: string },
  mention: Voice['mention'] = PLAIN_VOICE.mention,
): string {
  return `Only ${mention(gate.requesterId)}, who asked, can connect ${gate.providerName}.`;
}

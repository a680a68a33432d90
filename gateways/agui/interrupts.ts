/**
 * Gates as AG-UI interrupts, and AG-UI resume entries as the same decisions and answers a click sends. Pure: the
 * route (route.ts) reads the conversation's view, and sends what `resumeAction` returns through the gateway's
 * sealing client, so the workflow checks a resume exactly as it checks a click. Every word comes from the one
 * wording module (common/gates/words.ts).
 */
import type { Interrupt, ResumeEntry } from '@ag-ui/core';
import { approverIds, isProtected, mayApprove, mayDecide } from '../../common/gates/deciders';
import {
  alreadyDecided,
  alwaysAllowLabel,
  choiceLabels,
  decidersLine,
  decidersList,
  isBudgetGate,
  promptHeadline,
  questionsAsText,
  typedDecisionHint,
} from '../../common/gates/words';
import { MAX_CUSTOM_ANSWER, validateAnswers, type Answer, type Question } from '../../common/tools/ask-user';
import { elicitContent } from '../../common/tools/elicitation';
import { MAX_TOOL_ARGS_CHARS } from '../../workflows/session/transcript';
import type { Decision, Gate } from '../../workflows/session/contract';
import { shownQuestions } from '../../platforms/chat-text';
import { gateRule } from '../web/gate-rule';

/** The interrupt's `reason`: an open string in AG-UI; ours name the gate kind. */
export const INTERRUPT_REASONS = {
  approval: 'tool_approval',
  budget: 'budget_approval',
  question: 'input_required',
  serverQuestion: 'tool_server_input',
  credential: 'auth_required',
} as const;

/** A gate's prompt as an AG-UI interrupt, for `userId` (a Connect link is only ever that person's own). */
export function gateInterrupt(
  gate: Gate,
  userId: string,
  connectUrl: (provider: string, expiresAt: number) => string,
): Interrupt {
  const base = {
    id: gate.id,
    ...(gate.expiresAt ? { expiresAt: new Date(gate.expiresAt).toISOString() } : {}),
  };
  const mayAnswer = mayDecide(gate, userId);
  if (gate.kind === 'approval') {
    const budget = isBudgetGate(gate);
    const offered = approvalChoices(gate, userId);
    const labels = choiceLabels(budget);
    return {
      ...base,
      reason: budget ? INTERRUPT_REASONS.budget : INTERRUPT_REASONS.approval,
      ...(budget ? {} : { toolCallId: gate.toolCallId }),
      message: [promptHeadline(gate), ...(budget ? [] : [gate.subject]), decidersLine(gate)].join('\n'),
      responseSchema: approvalSchema(gate, offered, labels),
      metadata: {
        kind: 'approval',
        toolName: gate.toolName,
        ...(budget ? {} : { args: gate.args }),
        choices: offered,
        mayDecide: mayAnswer,
        deciders: approverIds(gate),
        hint: typedDecisionHint((text) => `"${text}"`),
      },
    };
  }
  if (gate.kind === 'credential') {
    const own = gate.requesterId === userId;
    return {
      ...base,
      reason: INTERRUPT_REASONS.credential,
      toolCallId: gate.toolCallId,
      message: [promptHeadline(gate), gateRule(gate)].join('\n'),
      // Nothing to send but "done" (or cancelled): the sign-in itself happens at the link, never in the resume.
      responseSchema: { type: 'object', properties: {}, additionalProperties: false },
      metadata: {
        kind: 'credential',
        provider: gate.provider,
        providerName: gate.providerName,
        mayDecide: own,
        ...(own
          ? { connectUrl: connectUrl(gate.provider, gate.expiresAt ?? gate.createdAt + 7 * 24 * 3_600_000) }
          : {}),
      },
    };
  }
  const questions = shownQuestions(gate, (text) => text);
  return {
    ...base,
    reason: gate.asks ? INTERRUPT_REASONS.serverQuestion : INTERRUPT_REASONS.question,
    toolCallId: gate.toolCallId,
    message: [promptHeadline(gate), questionsAsText(questions)].join('\n'),
    responseSchema: questionSchema(questions),
    metadata: {
      kind: 'question',
      toolName: gate.toolName,
      questions,
      mayDecide: mayAnswer,
      deciders: [gate.requesterId, ...gate.approvers],
      ...(gate.asks?.url ? { url: gate.asks.url } : {}),
    },
  };
}

/**
 * What an approval gate offers this person, as every channel offers it: no Always allow under four-eyes or quorum, no
 * Edit under quorum; someone who may only deny it (the requester under four-eyes) is offered Deny alone.
 */
export function approvalChoices(gate: Gate & { kind: 'approval' }, userId: string): Decision['choice'][] {
  if (!mayApprove(gate, userId)) return ['deny'];
  if (isBudgetGate(gate)) return ['approve', 'deny'];
  return [
    'approve',
    'deny',
    ...(isProtected(gate) ? [] : (['always'] as const)),
    ...((gate.approvalsNeeded ?? 1) > 1 ? [] : (['edit'] as const)),
  ];
}

function approvalSchema(
  gate: Gate & { kind: 'approval' },
  offered: Decision['choice'][],
  labels: { approve: string; deny: string },
): Record<string, unknown> {
  const title: Record<string, string> = {
    approve: labels.approve,
    deny: labels.deny,
    always: alwaysAllowLabel(gate.subject, 'session'),
    edit: 'Edit & approve',
  };
  return {
    type: 'object',
    required: ['choice'],
    additionalProperties: false,
    properties: {
      choice: { type: 'string', oneOf: offered.map((c) => ({ const: c, title: title[c] })) },
      reason: { type: 'string', maxLength: 2_000, description: 'With deny: told to the model.' },
      ...(offered.includes('edit')
        ? { args: { type: 'object', description: 'With edit: the arguments that will run instead.' } }
        : {}),
      ...(offered.includes('always')
        ? {
            scope: {
              type: 'string',
              enum: ['session', 'user'],
              description: 'With always: in this conversation (session) or everywhere for you (user).',
            },
            pattern: {
              type: 'string',
              maxLength: 500,
              description: 'With always: a glob the grant is limited to.',
            },
          }
        : {}),
    },
  };
}

/** One property per question, keyed by its label: an option (or several), or own words where allowed. */
function questionSchema(questions: readonly Question[]): Record<string, unknown> {
  const one = (q: Question) =>
    q.options.length && !q.allow_custom
      ? { type: 'string', enum: q.options.map((o) => o.label) }
      : {
          type: 'string',
          maxLength: 2_000,
          ...(q.options.length ? { examples: q.options.map((o) => o.label) } : {}),
        };
  return {
    type: 'object',
    additionalProperties: false,
    required: questions.filter((q) => q.required).map((q) => q.label),
    properties: Object.fromEntries(
      questions.map((q) => [
        q.label,
        {
          description: q.prompt,
          ...(q.multi_select ? { type: 'array', items: one(q), maxItems: 25 } : one(q)),
        },
      ]),
    ),
  };
}

/** What a resume entry does: the signal a click would send, a Stop, nothing (already done), or a refusal in words. */
export type ResumeAction =
  | { kind: 'decide'; decision: Omit<Decision, 'userId'> }
  | { kind: 'answer'; answers: Answer[] }
  | { kind: 'stop' }
  | { kind: 'nothing' }
  | { kind: 'refused'; code: ResumeErrorCode; message: string };

export type ResumeErrorCode =
  | 'interrupt_unknown'
  | 'interrupt_duplicate'
  | 'interrupts_unanswered'
  | 'interrupt_already_decided'
  | 'interrupt_expired'
  | 'interrupt_not_yours'
  | 'interrupt_payload_invalid'
  | 'sign_in_not_done';

/**
 * The coverage rule of AG-UI 1.0: a resume answers every interrupt this person was shown as open, each once, and
 * nothing else. `open` are the gates still pending that this person may act on; `all` every gate of the thread.
 */
export function checkCoverage(
  resume: readonly ResumeEntry[],
  open: readonly Gate[],
  all: readonly Gate[],
): { code: ResumeErrorCode; message: string } | undefined {
  const seen = new Set<string>();
  for (const entry of resume) {
    if (seen.has(entry.interruptId))
      return { code: 'interrupt_duplicate', message: `interrupt ${entry.interruptId} is answered twice` };
    seen.add(entry.interruptId);
    if (!all.some((g) => g.id === entry.interruptId))
      return { code: 'interrupt_unknown', message: `no interrupt ${entry.interruptId} in this conversation` };
  }
  const unanswered = open.filter((g) => !seen.has(g.id)).map((g) => g.id);
  if (unanswered.length)
    return {
      code: 'interrupts_unanswered',
      message: `a resume must answer every open interrupt; unanswered: ${unanswered.join(', ')}`,
    };
  return undefined;
}

/** The decision or answer one resume entry stands for, checked as far as the gateway can before the workflow does. */
export function resumeAction(gate: Gate, entry: ResumeEntry, userId: string, now: number): ResumeAction {
  if (gate.status !== 'pending') {
    // Signed in and done meanwhile is what a credential's "resolved" says: nothing left to do.
    if (gate.kind === 'credential' && gate.resolution?.outcome === 'connected' && entry.status === 'resolved')
      return { kind: 'nothing' };
    return { kind: 'refused', code: 'interrupt_already_decided', message: alreadyDecided(gate) };
  }
  if (gate.expiresAt && gate.expiresAt <= now)
    return {
      kind: 'refused',
      code: 'interrupt_expired',
      message: `Interrupt ${gate.id} expired at ${new Date(gate.expiresAt).toISOString()}.`,
    };
  const notYours = (who: string) =>
    ({
      kind: 'refused',
      code: 'interrupt_not_yours',
      message: `Only ${who} may answer interrupt ${gate.id}.`,
    }) as const;
  if (gate.kind === 'credential') {
    if (gate.requesterId !== userId) return notYours(`@${gate.requesterId}`);
    if (entry.status === 'cancelled') return { kind: 'stop' };
    return {
      kind: 'refused',
      code: 'sign_in_not_done',
      message: `${gate.providerName} is not connected yet: open the interrupt's connectUrl first, then resume.`,
    };
  }
  if (!mayDecide(gate, userId)) return notYours(decidersList(gate));
  const payload: unknown = entry.payload ?? {};
  const invalid = (message: string) =>
    ({ kind: 'refused', code: 'interrupt_payload_invalid', message }) as const;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return invalid(`the payload of interrupt ${gate.id} must be an object`);
  const fields = payload as Record<string, unknown>;
  if (gate.kind === 'approval') {
    if (entry.status === 'cancelled')
      return { kind: 'decide', decision: { gateId: gate.id, choice: 'deny', reason: 'Cancelled.' } };
    const offered = approvalChoices(gate, userId);
    const choice = fields.choice;
    if (typeof choice !== 'string' || !offered.includes(choice as Decision['choice']))
      return invalid(`choice must be one of ${offered.join(', ')}`);
    const reason = typeof fields.reason === 'string' ? fields.reason.slice(0, 2_000) : undefined;
    const args = fields.args;
    if (choice === 'edit' && (typeof args !== 'object' || args === null || Array.isArray(args)))
      return invalid('edit needs args: the arguments that will run');
    if (choice === 'edit' && JSON.stringify(args).length > MAX_TOOL_ARGS_CHARS)
      return invalid(`the edited arguments are longer than ${MAX_TOOL_ARGS_CHARS} characters`);
    const scope =
      fields.scope === 'user'
        ? 'user'
        : fields.scope === undefined || fields.scope === 'session'
          ? 'session'
          : undefined;
    if (!scope) return invalid('scope must be session or user');
    const pattern =
      typeof fields.pattern === 'string' && fields.pattern.trim() ? fields.pattern.slice(0, 500) : undefined;
    return {
      kind: 'decide',
      decision: {
        gateId: gate.id,
        choice: choice as Decision['choice'],
        ...(reason ? { reason } : {}),
        ...(choice === 'edit' ? { args: args as Record<string, unknown> } : {}),
        ...(choice === 'always' ? { scope, ...(pattern ? { pattern } : {}) } : {}),
      },
    };
  }
  // A question: a tool server's is declined (it decides what its call does then); the model's ends the turn (Stop).
  if (entry.status === 'cancelled')
    return gate.asks
      ? { kind: 'decide', decision: { gateId: gate.id, choice: 'deny', reason: 'Cancelled.' } }
      : { kind: 'stop' };
  const answers = answersFrom(gate.questions, fields);
  if (typeof answers === 'string') return invalid(answers);
  const checked = validateAnswers(gate.questions, answers);
  if (!checked.ok) return invalid(checked.error);
  // A tool server's question: the answers must also make the values its schema wants, as the workflow checks.
  if (gate.asks) {
    const content = elicitContent(gate.asks.fields, checked.answers);
    if (!content.ok) return invalid(content.error);
  }
  return { kind: 'answer', answers };
}

/** `{label: "option" | ["a", "b"] | "own words"}` as the workflow's answers: options picked, anything else custom. */
function answersFrom(questions: readonly Question[], fields: Record<string, unknown>): Answer[] | string {
  const known = new Set(questions.map((q) => q.label));
  const stray = Object.keys(fields).find((key) => !known.has(key));
  if (stray !== undefined) return `no question is labelled "${stray.slice(0, 40)}"`;
  const answers: Answer[] = [];
  for (const q of questions) {
    const value = fields[q.label];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    if (!values.every((v): v is string => typeof v === 'string'))
      return `the answer to "${q.label}" must be text${q.multi_select ? ' or a list of texts' : ''}`;
    if (values.length > 25 || values.some((v) => v.length > MAX_CUSTOM_ANSWER))
      return `the answer to "${q.label}" is longer than a question takes (25 choices, ${MAX_CUSTOM_ANSWER} characters)`;
    const options = new Set(q.options.map((o) => o.label));
    const custom = values.filter((v) => !options.has(v));
    answers.push({
      question: q.label,
      selected: values.filter((v) => options.has(v)),
      ...(custom.length ? { custom: custom.join(', ') } : {}),
    });
  }
  return answers;
}

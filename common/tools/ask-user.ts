/**
 * ask_user: the model's structured questions to a person, and the answers' validation. Pure (zod only):
 * the workflow intercepts ask_user as a question gate — it is never executed as an activity, never shown
 * as an approval — and checks submissions with these functions.
 */
import { z } from 'zod';
import { sharedSchemas } from '../shared-schemas';

export const MAX_CUSTOM_ANSWER = 2_000;

const schemas = sharedSchemas('ask-user', () => {
  const option = z.strictObject({
    label: z.string().trim().min(1).max(75).describe('What the person picks'),
    description: z.string().max(200).optional().describe('A short explanation shown under the option'),
  });
  const question = z
    .strictObject({
      label: z
        .string()
        .trim()
        .min(1)
        .max(40)
        .describe('A short header, unique within the call, e.g. "Environment"'),
      prompt: z.string().trim().min(1).max(1_000).describe('The question itself'),
      options: z.array(option).max(25).default([]),
      multi_select: z.boolean().default(false).describe('Allow picking several options'),
      allow_custom: z.boolean().default(false).describe('Allow a free-text "Other" answer'),
      required: z.boolean().default(true),
    })
    .refine((q) => q.options.length > 0 || q.allow_custom, {
      message: 'a question needs options, or allow_custom for a free-text answer',
    })
    .refine((q) => new Set(q.options.map((o) => o.label)).size === q.options.length, {
      message: 'option labels must be unique',
    });
  return {
    question,
    askUserArgs: z
      .strictObject({
        questions: z.array(question).min(1).max(5).describe('One to five questions, asked together'),
      })
      .refine((args) => new Set(args.questions.map((q) => q.label)).size === args.questions.length, {
        message: 'question labels must be unique',
      }),
    /** One submitted answer; `question` is the question's label. */
    answer: z.strictObject({
      question: z.string().min(1).max(40),
      selected: z.array(z.string().max(75)).max(25).default([]),
      custom: z.string().max(MAX_CUSTOM_ANSWER).optional(),
    }),
  };
});

export const questionSchema = schemas.question;
export type Question = z.infer<typeof questionSchema>;
export const askUserArgsSchema = schemas.askUserArgs;
export type AskUserArgs = z.infer<typeof askUserArgsSchema>;
export const answerSchema = schemas.answer;
export type Answer = z.infer<typeof answerSchema>;

export interface AskUserResult {
  answers: { question: string; selected: string[]; custom?: string }[];
  answered_by: string;
  answered_at: string;
}

export type AnswerCheck = { ok: true; answers: AskUserResult['answers'] } | { ok: false; error: string };

/** Checks a submission against the questions: known options, single vs multi, required, custom only where allowed. */
export function validateAnswers(questions: readonly Question[], submitted: readonly Answer[]): AnswerCheck {
  const byLabel = new Map(submitted.map((a) => [a.question, a]));
  for (const answer of submitted) {
    if (!questions.some((q) => q.label === answer.question))
      return { ok: false, error: `there is no question "${answer.question}"` };
  }
  if (byLabel.size !== submitted.length) return { ok: false, error: 'each question may be answered once' };
  const answers: AskUserResult['answers'] = [];
  for (const question of questions) {
    const answer = byLabel.get(question.label);
    const selected = [...new Set(answer?.selected ?? [])];
    const custom = answer?.custom?.trim() || undefined;
    const unknown = selected.find((label) => !question.options.some((o) => o.label === label));
    if (unknown) return { ok: false, error: `"${unknown}" is not an option of "${question.label}"` };
    if (!question.multi_select && selected.length > 1)
      return { ok: false, error: `"${question.label}" takes one choice` };
    if (custom && !question.allow_custom)
      return { ok: false, error: `"${question.label}" does not take a free-text answer` };
    if (!question.multi_select && custom && selected.length)
      return { ok: false, error: `"${question.label}" takes one choice: an option or your own answer` };
    if (question.required && selected.length === 0 && !custom)
      return { ok: false, error: `"${question.label}" needs an answer` };
    answers.push({ question: question.label, selected, ...(custom ? { custom } : {}) });
  }
  return { ok: true, answers };
}

/**
 * The text fallback for a single question: "2", "1,3", "other: my own words", or an option's label.
 * Returns undefined when the reply is not clearly an answer, so the question can be asked again.
 */
export function parseTextAnswer(question: Question, text: string): Answer | undefined {
  const reply = text.trim();
  const other = /^other\s*[:-]\s*([\s\S]+)$/i.exec(reply);
  if (other)
    return question.allow_custom
      ? { question: question.label, selected: [], custom: other[1]!.trim() }
      : undefined;
  if (/^\d+(\s*,\s*\d+)*$/.test(reply)) {
    const picks = reply.split(',').map((n) => Number(n.trim()));
    if (picks.some((n) => n < 1 || n > question.options.length)) return undefined;
    if (!question.multi_select && picks.length > 1) return undefined;
    return {
      question: question.label,
      selected: [...new Set(picks.map((n) => question.options[n - 1]!.label))],
    };
  }
  const option = question.options.find((o) => o.label.toLowerCase() === reply.toLowerCase());
  return option ? { question: question.label, selected: [option.label] } : undefined;
}

/** One "N: answer" (or "Label: answer") part of a typed reply. */
const PART = /^\s*([^:;\n]{1,40}?)\s*:\s*([\s\S]*)$/;

export type TextAnswersCheck = AnswerCheck | undefined;

/**
 * A typed reply to several questions at once: parts separated by ";" or new lines, each "N: answer" or
 * "Label: answer", where an answer reads like `parseTextAnswer`'s ("2", "1,3", "other: your words", an
 * option's label, or free text for a question without options). A single question also takes the bare
 * answer. Undefined when the reply does not look like answers at all (it is then an ordinary message);
 * otherwise the validated answers, or an error naming what is missing or invalid.
 */
export function parseTextAnswers(questions: readonly Question[], text: string): TextAnswersCheck {
  const reply = text.trim();
  if (questions.length === 1) {
    const bare = parseTextAnswer(questions[0]!, reply);
    if (bare) return validateAnswers(questions, [bare]);
  }
  const parts = reply
    .split(/[;\n]/)
    .map((part) => part.trim())
    .filter(Boolean);
  const keyOf = (part: string) => {
    const match = PART.exec(part);
    if (!match) return undefined;
    const key = match[1]!.trim();
    const index = /^\d+$/.test(key)
      ? Number(key) - 1
      : questions.findIndex((q) => q.label.toLowerCase() === key.toLowerCase());
    return { key, index, answer: match[2]!.trim() };
  };
  const first = parts[0] ? keyOf(parts[0]) : undefined;
  if (!first || !(first.index >= 0 && first.index < questions.length)) return undefined;
  const answers: Answer[] = [];
  for (const part of parts) {
    const parsed = keyOf(part);
    if (!parsed) return { ok: false, error: `"${part.slice(0, 60)}" is not "question: answer"` };
    const question = questions[parsed.index];
    if (!question)
      return {
        ok: false,
        error: `there is no question ${/^\d+$/.test(parsed.key) ? `number ${parsed.key}` : `"${parsed.key}"`} (questions are 1 to ${questions.length})`,
      };
    if (answers.some((a) => a.question === question.label))
      return { ok: false, error: `question ${parsed.index + 1} (${question.label}) is answered twice` };
    const answer =
      parseTextAnswer(question, parsed.answer) ??
      (!question.options.length && question.allow_custom && parsed.answer
        ? { question: question.label, selected: [], custom: parsed.answer }
        : undefined);
    if (!answer) return { ok: false, error: notAnAnswer(question, parsed.index, parsed.answer) };
    answers.push(answer);
  }
  const missing = questions
    .map((q, i) => ({ q, i }))
    .filter(({ q }) => q.required && !answers.some((a) => a.question === q.label));
  if (missing.length)
    return {
      ok: false,
      error: `still missing: ${missing.map(({ q, i }) => `${i + 1} (${q.label})`).join(', ')}`,
    };
  return validateAnswers(questions, answers);
}

function notAnAnswer(question: Question, index: number, answer: string): string {
  const choices = question.options.length
    ? `${question.multi_select ? 'numbers from' : 'a number from'} 1 to ${question.options.length}`
    : 'your own words';
  const other = question.allow_custom && question.options.length ? ', or "other: your answer"' : '';
  return `"${answer.slice(0, 60)}" is not an answer to question ${index + 1} (${question.label}): reply with ${choices}${other}`;
}

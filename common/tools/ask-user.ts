/**
 * ask_user: the model's structured questions to a person, and the answers' validation. Pure (zod only):
 * the workflow intercepts ask_user as a question gate — it is never executed as an activity, never shown
 * as an approval — and checks submissions with these functions.
 */
import { z } from 'zod';

const optionSchema = z.strictObject({
  label: z.string().trim().min(1).max(75).describe('What the person picks'),
  description: z.string().max(200).optional().describe('A short explanation shown under the option'),
});

export const questionSchema = z
  .strictObject({
    label: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .describe('A short header, unique within the call, e.g. "Environment"'),
    prompt: z.string().trim().min(1).max(1_000).describe('The question itself'),
    options: z.array(optionSchema).max(25).default([]),
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
export type Question = z.infer<typeof questionSchema>;

export const askUserArgsSchema = z
  .strictObject({
    questions: z.array(questionSchema).min(1).max(5).describe('One to five questions, asked together'),
  })
  .refine((args) => new Set(args.questions.map((q) => q.label)).size === args.questions.length, {
    message: 'question labels must be unique',
  });
export type AskUserArgs = z.infer<typeof askUserArgsSchema>;

export const MAX_CUSTOM_ANSWER = 2_000;

/** One submitted answer; `question` is the question's label. */
export const answerSchema = z.strictObject({
  question: z.string().min(1).max(40),
  selected: z.array(z.string().max(75)).max(25).default([]),
  custom: z.string().max(MAX_CUSTOM_ANSWER).optional(),
});
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

/** How a question reads in plain text (for text-only channels and the fallback hint). */
export function questionAsText(question: Question): string {
  const options = question.options.map(
    (o, i) => `  ${i + 1}. ${o.label}${o.description ? ` — ${o.description}` : ''}`,
  );
  const how = question.multi_select ? 'Reply with numbers, e.g. "1,3"' : 'Reply with a number';
  return [
    question.prompt,
    ...options,
    `${how}${question.allow_custom ? ', or "other: your answer"' : ''}.`,
  ].join('\n');
}

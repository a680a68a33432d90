import { describe, expect, it } from 'vitest';
import {
  askUserArgsSchema,
  parseTextAnswer,
  parseTextAnswers,
  validateAnswers,
  type Question,
} from '../../common/tools/ask-user';
import { askUserTool, checkToolArgs } from '../../common/tools/definitions';
import { questionsAsText, typedAnswerHint } from '../../common/gates/words';

const env: Question = {
  label: 'Environment',
  prompt: 'Where?',
  options: [{ label: 'staging', description: 'safe' }, { label: 'production' }],
  multi_select: false,
  allow_custom: false,
  required: true,
};
const checks: Question = {
  label: 'Checks',
  prompt: 'Which?',
  options: [{ label: 'lint' }, { label: 'tests' }, { label: 'build' }],
  multi_select: true,
  allow_custom: true,
  required: false,
};

describe('ask_user arguments', () => {
  it('accepts questions and fills the defaults', () => {
    const parsed = askUserArgsSchema.parse({
      questions: [{ label: 'Env', prompt: 'Where?', options: [{ label: 'a' }] }],
    });
    expect(parsed.questions[0]).toMatchObject({ multi_select: false, allow_custom: false, required: true });
  });

  it('explains what is wrong in arguments the model sent', () => {
    const noOptions = checkToolArgs(askUserTool, { questions: [{ label: 'Env', prompt: 'Where?' }] });
    expect(noOptions).toMatchObject({
      ok: false,
      error: expect.stringContaining('needs options, or allow_custom'),
    });
    const duplicate = checkToolArgs(askUserTool, {
      questions: [
        { label: 'A', prompt: 'x', allow_custom: true },
        { label: 'A', prompt: 'y', allow_custom: true },
      ],
    });
    expect(duplicate).toMatchObject({
      ok: false,
      error: expect.stringContaining('question labels must be unique'),
    });
    const tooMany = checkToolArgs(askUserTool, {
      questions: Array.from({ length: 6 }, (_, i) => ({ label: `q${i}`, prompt: 'x', allow_custom: true })),
    });
    expect(tooMany.ok).toBe(false);
    expect(checkToolArgs(askUserTool, { questions: [] }).ok).toBe(false);
  });
});

describe('answer validation', () => {
  it('accepts valid answers and records each question', () => {
    expect(
      validateAnswers(
        [env, checks],
        [
          { question: 'Environment', selected: ['staging'] },
          { question: 'Checks', selected: ['lint', 'tests'], custom: 'fuzz' },
        ],
      ),
    ).toEqual({
      ok: true,
      answers: [
        { question: 'Environment', selected: ['staging'] },
        { question: 'Checks', selected: ['lint', 'tests'], custom: 'fuzz' },
      ],
    });
  });

  it('lets an optional question go unanswered', () => {
    expect(
      validateAnswers([env, checks], [{ question: 'Environment', selected: ['production'] }]),
    ).toMatchObject({ ok: true });
  });

  it.each([
    [[{ question: 'Checks', selected: ['lint'] }], '"Environment" needs an answer'],
    [[{ question: 'Environment', selected: ['qa'] }], '"qa" is not an option of "Environment"'],
    [[{ question: 'Environment', selected: ['staging', 'production'] }], '"Environment" takes one choice'],
    [
      [{ question: 'Environment', selected: [], custom: 'moon' }],
      '"Environment" does not take a free-text answer',
    ],
    [[{ question: 'Nope', selected: [] }], 'there is no question "Nope"'],
    [
      [
        { question: 'Environment', selected: ['staging'] },
        { question: 'Environment', selected: ['staging'] },
      ],
      'each question may be answered once',
    ],
  ])('refuses %j with "%s"', (answers, error) => {
    expect(validateAnswers([env, checks], answers)).toEqual({ ok: false, error });
  });
});

describe('text fallback', () => {
  it('reads numbers, lists, option names and "other:"', () => {
    expect(parseTextAnswer(env, '2')).toEqual({ question: 'Environment', selected: ['production'] });
    expect(parseTextAnswer(env, ' Staging ')).toEqual({ question: 'Environment', selected: ['staging'] });
    expect(parseTextAnswer(checks, '1, 3')).toEqual({ question: 'Checks', selected: ['lint', 'build'] });
    expect(parseTextAnswer(checks, 'other: mutation tests')).toEqual({
      question: 'Checks',
      selected: [],
      custom: 'mutation tests',
    });
  });

  it('returns nothing for an unclear reply, so the question is asked again', () => {
    expect(parseTextAnswer(env, '3')).toBeUndefined();
    expect(parseTextAnswer(env, '1,2')).toBeUndefined();
    expect(parseTextAnswer(env, 'other: moon')).toBeUndefined();
    expect(parseTextAnswer(env, 'what do you mean?')).toBeUndefined();
  });

  it('renders numbered options with the reply hint', () => {
    expect(questionsAsText([checks])).toBe(
      'Which?\n  1. lint\n  2. tests\n  3. build\nReply with numbers, e.g. "1,3", or "other: your answer".',
    );
  });
});

describe('typed answers to several questions', () => {
  const free: Question = {
    label: 'Notes',
    prompt: 'Anything else?',
    options: [],
    multi_select: false,
    allow_custom: true,
    required: false,
  };
  const questions = [env, checks, free];

  it('reads "1: 2; 2: 1,3; 3: ..." into validated answers', () => {
    expect(parseTextAnswers(questions, '1: 2; 2: 1,3; 3: smoke first')).toEqual({
      ok: true,
      answers: [
        { question: 'Environment', selected: ['production'] },
        { question: 'Checks', selected: ['lint', 'build'] },
        { question: 'Notes', selected: [], custom: 'smoke first' },
      ],
    });
  });

  it('takes new lines, labels and "other:" answers, and leaves optional questions out', () => {
    expect(parseTextAnswers(questions, 'environment: staging\n2: other: smoke')).toEqual({
      ok: true,
      answers: [
        { question: 'Environment', selected: ['staging'] },
        { question: 'Checks', selected: [], custom: 'smoke' },
        { question: 'Notes', selected: [] },
      ],
    });
  });

  it('names what is missing or invalid', () => {
    expect(parseTextAnswers(questions, '2: 1')).toEqual({
      ok: false,
      error: 'still missing: 1 (Environment)',
    });
    expect(parseTextAnswers(questions, '1: 3; 2: 1')).toMatchObject({
      ok: false,
      error: expect.stringContaining(
        '"3" is not an answer to question 1 (Environment): reply with a number from 1 to 2',
      ),
    });
    expect(parseTextAnswers(questions, '1: 1; 4: 1')).toMatchObject({
      ok: false,
      error: 'there is no question number 4 (questions are 1 to 3)',
    });
    expect(parseTextAnswers(questions, '1: 1; 1: 2')).toMatchObject({
      ok: false,
      error: expect.stringContaining('answered twice'),
    });
    expect(parseTextAnswers(questions, '1: 1; and also this')).toMatchObject({
      ok: false,
      error: expect.stringContaining('is not "question: answer"'),
    });
  });

  it('leaves ordinary messages alone', () => {
    expect(parseTextAnswers(questions, 'what do you mean?')).toBeUndefined();
    expect(parseTextAnswers(questions, 'Note: later')).toBeUndefined();
    expect(parseTextAnswers([env], 'deploy tomorrow')).toBeUndefined();
  });

  it('takes a bare answer to a single question', () => {
    expect(parseTextAnswers([env], '2')).toEqual({
      ok: true,
      answers: [{ question: 'Environment', selected: ['production'] }],
    });
  });

  it('numbers every question, with the reply format', () => {
    expect(questionsAsText([env, checks], (t) => `*${t}*`)).toBe(
      [
        '*1. Environment*: Where?',
        '    1. staging — safe',
        '    2. production',
        '*2. Checks*: Which? (several allowed, or your own words, optional)',
        '    1. lint',
        '    2. tests',
        '    3. build',
        'Reply with "question: answer" for each, e.g. "1: 1; 2: 1,2", or "2: other: your answer".',
      ].join('\n'),
    );
    // One question alone is not numbered as a question and needs no "question: answer" form.
    expect(questionsAsText([env])).not.toContain('question: answer');
    expect(typedAnswerHint([free])).toBe('Reply "other: your answer"');
  });
});

/**
 * A tool server's question (MCP elicitation) as questions a person answers, and their answers as what the server's
 * schema wants: every kind of field, and a refusal in plain words for every answer that does not fit.
 */
import { describe, expect, it } from 'vitest';
import { validateAnswers } from '../../common/tools/ask-user';
import {
  elicitContent,
  elicitFields,
  fieldQuestion,
  urlQuestion,
  type ElicitAsk,
  type ElicitField,
} from '../../common/tools/elicitation';

const booking: Extract<ElicitAsk, { mode: 'form' }> = {
  mode: 'form',
  server: 'booking',
  message: 'Who is it for?',
  digest: 'd1',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 2 },
    guests: { type: 'integer', title: 'Guests', description: 'How many people', minimum: 1, maximum: 12 },
    time: {
      type: 'string',
      title: 'Time',
      oneOf: [
        { const: '18:00', title: 'Six' },
        { const: '19:00', title: 'Seven' },
      ],
    },
    outdoor: { type: 'boolean', title: 'Outdoor' },
    email: { type: 'string', format: 'email' },
  },
  required: ['name', 'guests', 'time'],
};

const fieldsOf = (ask: Extract<ElicitAsk, { mode: 'form' }>) => elicitFields(ask) as ElicitField[];
const questionsOf = (ask: Extract<ElicitAsk, { mode: 'form' }>) =>
  fieldsOf(ask).map((f) => fieldQuestion(f, ask.properties[f.key]));

describe('a tool server’s question', () => {
  it('is asked as one question per field, with options for choices and yes/no, and what a valid answer is', () => {
    const questions = questionsOf(booking);
    expect(questions.map((q) => q.label)).toEqual(['Name', 'Guests', 'Time', 'Outdoor', 'email']);
    expect(questions[1]).toMatchObject({
      prompt: 'How many people (a whole number from 1 to 12)',
      allow_custom: true,
      options: [],
      required: true,
    });
    expect(questions[2]!.options.map((o) => o.label)).toEqual(['Six', 'Seven']);
    expect(questions[3]!.options.map((o) => o.label)).toEqual(['Yes', 'No']);
    expect(questions[3]!.required).toBe(false);
    expect(questions[4]!.prompt).toBe('email (an email address)');
  });

  it('turns the answers into the values the schema wants (numbers, the choice’s value, booleans)', () => {
    const answers = [
      { question: 'Name', selected: [], custom: 'Ada' },
      { question: 'Guests', selected: [], custom: '4' },
      { question: 'Time', selected: ['Seven'] },
      { question: 'Outdoor', selected: ['Yes'] },
    ];
    const checked = validateAnswers(questionsOf(booking), answers);
    expect(checked.ok).toBe(true);
    expect(elicitContent(fieldsOf(booking), answers)).toEqual({
      ok: true,
      content: { name: 'Ada', guests: 4, time: '19:00', outdoor: true },
    });
  });

  it('sends the server’s default for an optional field left unanswered (SEP-1034), and only a default that fits', () => {
    const ask: Extract<ElicitAsk, { mode: 'form' }> = {
      ...booking,
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive'], default: 'active' },
        verified: { type: 'boolean', default: true },
        wrong: { type: 'integer', default: 'many' },
        stray: { type: 'string', enum: ['a', 'b'], default: 'c' },
      },
      required: [],
    };
    expect(elicitContent(fieldsOf(ask), [])).toEqual({
      ok: true,
      content: { name: 'John Doe', age: 30, score: 95.5, status: 'active', verified: true },
    });
    // An answer given wins over the default.
    expect(elicitContent(fieldsOf(ask), [{ question: 'age', selected: [], custom: '41' }])).toMatchObject({
      content: { age: 41 },
    });
  });

  it('refuses an answer that does not fit, naming the field and what it takes', () => {
    const fields = fieldsOf(booking);
    const base = [
      { question: 'Name', selected: [], custom: 'Ada' },
      { question: 'Time', selected: ['Six'] },
    ];
    const refused = (answers: typeof base) => {
      const result = elicitContent(fields, answers);
      return result.ok ? undefined : result.error;
    };
    expect(refused([...base, { question: 'Guests', selected: [], custom: '40' }])).toBe(
      '"Guests" takes a whole number from 1 to 12 (“40” is not)',
    );
    expect(refused([...base, { question: 'Guests', selected: [], custom: '2.5' }])).toMatch(/whole number/);
    expect(refused([...base, { question: 'Guests', selected: [], custom: 'four' }])).toMatch(/whole number/);
    expect(refused(base)).toBe('"Guests" needs an answer');
    expect(
      refused([
        ...base,
        { question: 'Guests', selected: [], custom: '2' },
        { question: 'email', selected: [], custom: 'not an address' },
      ]),
    ).toMatch(/"email" takes an email address/);
    expect(
      refused([
        { question: 'Name', selected: [], custom: 'A' },
        { question: 'Time', selected: ['Six'] },
        { question: 'Guests', selected: [], custom: '2' },
      ]),
    ).toMatch(/"Name" takes at least 2 characters/);
  });

  it('asks a choice of more than 25 values in words, and takes a value or its label', () => {
    const many = Array.from({ length: 30 }, (_, i) => `city-${i + 1}`);
    const ask = {
      ...booking,
      properties: { city: { type: 'string' as const, enum: many } },
      required: ['city'],
    };
    const [question] = questionsOf(ask);
    expect(question).toMatchObject({ options: [], allow_custom: true });
    expect(question!.prompt).toMatch(/one of: city-1, city-2/);
    const fields = fieldsOf(ask);
    expect(elicitContent(fields, [{ question: 'city', selected: [], custom: 'city-27' }])).toEqual({
      ok: true,
      content: { city: 'city-27' },
    });
    expect(elicitContent(fields, [{ question: 'city', selected: [], custom: 'atlantis' }]).ok).toBe(false);
  });

  it('takes several picks for an array field, within its bounds', () => {
    const ask = {
      ...booking,
      properties: {
        toppings: {
          type: 'array' as const,
          title: 'Toppings',
          minItems: 1,
          maxItems: 2,
          items: {
            anyOf: [
              { const: 'c', title: 'Cheese' },
              { const: 'h', title: 'Ham' },
              { const: 'o', title: 'Olives' },
            ],
          },
        },
      },
      required: ['toppings'],
    };
    expect(questionsOf(ask)[0]).toMatchObject({ multi_select: true });
    const fields = fieldsOf(ask);
    expect(elicitContent(fields, [{ question: 'Toppings', selected: ['Cheese', 'Olives'] }])).toEqual({
      ok: true,
      content: { toppings: ['c', 'o'] },
    });
    expect(elicitContent(fields, [{ question: 'Toppings', selected: ['Cheese', 'Ham', 'Olives'] }])).toEqual({
      ok: false,
      error: '"Toppings" takes pick 1 to 2 (3 picked)',
    });
  });

  it('refuses a form with nothing to ask or too many fields, and asks a link as one question', () => {
    expect(elicitFields({ ...booking, properties: {} })).toEqual({ error: 'the server asked for nothing' });
    const wide = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`f${i}`, { type: 'string' as const }]),
    );
    expect(elicitFields({ ...booking, properties: wide })).toMatchObject({
      error: expect.stringMatching(/16 fields/),
    });
    expect(
      urlQuestion({
        mode: 'url',
        server: 's',
        message: 'Link it',
        url: 'https://example.com/x',
        digest: 'd',
      }),
    ).toMatchObject({
      label: 'Done',
      options: [{ label: 'Done' }],
      prompt: expect.stringContaining('https://example.com/x'),
    });
  });
});

/**
 * A gate as an Adaptive Card with Universal Actions (`Action.Execute`, card version 1.4): Teams sends a click to the
 * bot as an `adaptiveCard/action` invoke, and the card the bot answers with replaces the clicked one in place for the
 * clicker; the posted card is then edited for everyone when the gate changes. The words are every channel's
 * (common/gates/words.ts): the prompt's headline, what is asked, who may decide, the outcome.
 */
import {
  approvalProgress,
  choiceLabels,
  decidersLine,
  describeOutcome,
  isBudgetGate,
  onlyRequesterConnects,
  promptHeadline,
} from '../../common/gates/words';
import { isProtected } from '../../common/gates/deciders';
import { personOf, type UsersTable } from '../../common/identities';
import { PLAIN_VOICE, type Voice } from '../../common/gates/words';
import type { Gate } from '../../workflows/session/contract';

export const CARD_CONTENT_TYPE = 'application/vnd.microsoft.card.adaptive';

/** What a card's Execute carries (besides the inputs): the verb says what, `g` which gate. */
export const VERBS = {
  approve: 'gate.approve',
  deny: 'gate.deny',
  always: 'gate.always',
  /** Opens the edit form (for the clicker); `editApprove` approves with the edited arguments. */
  edit: 'gate.edit',
  editApprove: 'gate.editApprove',
  answer: 'gate.answer',
  connect: 'gate.connect',
} as const;

type Element = Record<string, unknown>;

const text = (value: string, extra: Element = {}): Element => ({
  type: 'TextBlock',
  text: value,
  wrap: true,
  ...extra,
});

function card(body: Element[], actions: Element[] = []): Element {
  return {
    type: 'AdaptiveCard',
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    version: '1.4',
    body,
    ...(actions.length ? { actions } : {}),
  };
}

const execute = (title: string, verb: string, data: Record<string, unknown>): Element => ({
  type: 'Action.Execute',
  title,
  verb,
  data,
});

/** People by their policy names (`users`), so a card says "@alice" rather than a Teams object id. */
export function teamsVoice(users: UsersTable): Voice {
  return { ...PLAIN_VOICE, mention: (id) => `@${personOf(id, users)}` };
}

/** An open gate's card, the same for everyone who sees it. `note`: a line for the clicker (their click's outcome). */
export function openGateCard(gate: Gate, note?: string, voice: Voice = PLAIN_VOICE): Element {
  const head = [text(promptHeadline(gate, voice), { weight: 'Bolder' })];
  const tail = note ? [text(note, { color: 'Accent' })] : [];
  const g = { g: gate.id };
  if (gate.kind === 'approval') {
    const budget = isBudgetGate(gate);
    const labels = choiceLabels(budget);
    const progress = approvalProgress(gate, voice.mention);
    return card(
      [
        ...head,
        ...(budget ? [] : [text(gate.subject, { fontType: 'Monospace' })]),
        text(decidersLine(gate, voice.mention), { isSubtle: true }),
        ...(progress ? [text(progress)] : []),
        {
          type: 'Input.Text',
          id: 'reason',
          placeholder: 'Reason (told to the agent if you deny)',
          isMultiline: true,
          maxLength: 2_000,
        },
        ...tail,
      ],
      [
        execute(labels.approve, VERBS.approve, g),
        execute(labels.deny, VERBS.deny, g),
        ...(budget || isProtected(gate) ? [] : [execute('Always allow here', VERBS.always, g)]),
        ...(budget || (gate.approvalsNeeded ?? 1) > 1 ? [] : [execute('Edit & approve…', VERBS.edit, g)]),
      ],
    );
  }
  if (gate.kind === 'question') {
    const inputs = gate.questions.flatMap((q, index) => [
      text(`**${q.label}**: ${q.prompt}`),
      ...(q.options.length
        ? [
            {
              type: 'Input.ChoiceSet',
              id: `q${index}`,
              style: 'expanded',
              isMultiSelect: q.multi_select,
              choices: q.options.map((o) => ({ title: o.label, value: o.label })),
            },
          ]
        : []),
      ...(q.allow_custom || !q.options.length
        ? [
            {
              type: 'Input.Text',
              id: `q${index}.other`,
              placeholder: q.options.length ? 'Other' : 'Your answer',
              maxLength: 2_000,
            },
          ]
        : []),
    ]);
    return card([...head, ...inputs, ...tail], [execute('Submit', VERBS.answer, g)]);
  }
  if (gate.kind === 'credential')
    return card(
      [...head, text(onlyRequesterConnects(gate, voice.mention), { isSubtle: true }), ...tail],
      [execute(`Connect ${gate.providerName}`, VERBS.connect, g)],
    );
  return card([...head, ...tail]);
}

/** A decided gate's card: what was decided, by whom, where and when; no buttons. */
export function decidedGateCard(gate: Gate, voice: Voice = PLAIN_VOICE): Element {
  return card([
    text(promptHeadline(gate, voice), { weight: 'Bolder', isSubtle: true }),
    ...(gate.kind === 'approval' && !isBudgetGate(gate)
      ? [text(gate.subject, { fontType: 'Monospace', isSubtle: true })]
      : []),
    text(describeOutcome(gate, voice, { where: true })),
  ]);
}

/** The clicker's edit form: the call's arguments as JSON, approved as edited (the workflow checks them). */
export function editCard(
  gate: Gate & { kind: 'approval' },
  args: unknown,
  voice: Voice = PLAIN_VOICE,
): Element {
  return card(
    [
      text(promptHeadline(gate, voice), { weight: 'Bolder' }),
      text('Edit the arguments (JSON), then approve the call as edited:'),
      {
        type: 'Input.Text',
        id: 'args',
        isMultiline: true,
        maxLength: 20_000,
        value: JSON.stringify(args, null, 2),
      },
    ],
    [
      execute('Approve as edited', VERBS.editApprove, { g: gate.id }),
      execute('Back', VERBS.edit, { g: gate.id, back: true }),
    ],
  );
}

/** A card for the clicker only: a sign-in link (never shown to the rest of the conversation). */
export function connectCard(gate: Gate, url: string, provider: string): Element {
  return card(
    [
      text(promptHeadline(gate), { weight: 'Bolder' }),
      text(`Your own sign-in link for ${provider} (it works once, for you):`),
    ],
    [{ type: 'Action.OpenUrl', title: `Connect ${provider}`, url }],
  );
}

export const asAttachment = (content: Element) => ({ contentType: CARD_CONTENT_TYPE, content });

/**
 * Pure builders of what Discord shows: message chunks within 2,000 characters, gate prompts with
 * buttons and select menus, their decided form, and the Deny / Edit / Answer modals. Unit-tested by structure.
 */
import {
  ButtonStyle,
  ComponentType,
  TextInputStyle,
  type APIActionRowComponent,
  type APIComponentInMessageActionRow,
  type APIModalInteractionResponseCallbackData,
  type RESTPostAPIChannelMessageJSONBody,
} from 'discord-api-types/v10';
import type { ApprovalGate, CredentialGate, Gate, QuestionGate } from '../../workflows/session/contract';
import type { Question } from '../../common/tools/ask-user';
import {
  answerLines,
  argsPreview,
  decidedSubject,
  questionIntro,
  shownQuestions,
  splitMessage,
} from '../chat-text';
import {
  alwaysAllowLabel,
  choiceLabels,
  decidersLine,
  isBudgetGate,
  questionsAsText,
  typedDecisionHint,
} from '../../common/gates/words';
import { isProtected } from '../../common/gates/deciders';
import { encodeCustomId, isSnowflake, type DiscordAction } from './ids';

export const MESSAGE_LIMIT = 2_000;

/** Text shown as written: no masked links, mentions, headings or formatting from what a tool server wrote. */
const escapeDiscordMarkdown = (text: string) => text.replace(/[\\[\]()*_~`|<>#@]/g, (c) => `\\${c}`);
const ARGS_PREVIEW_LIMIT = 1_200;
/** A message holds five action rows: up to four questions get a select menu, the last row holds buttons. */
const MAX_SELECTS = 4;

type Row = APIActionRowComponent<APIComponentInMessageActionRow>;
type Reason = 'opened' | 'repost' | 'reminder';

/** `@123…` (a user id in workflow text) becomes a real Discord mention. */
export function discordMentions(text: string): string {
  return text.replace(/(^|[^<\w])@(\d{17,20})\b/g, '$1<@$2>');
}

export function splitForDiscord(text: string): string[] {
  // Leave room for the "(part i of n)" suffix.
  return splitMessage(text, MESSAGE_LIMIT - 40);
}

const cut = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit - 1)}…` : text);

const mention = (id: string) => (isSnowflake(id) ? `<@${id}>` : id);

/** Only the people a gate concerns are pinged; nothing in agent text can ping @everyone. */
function allowedMentions(gate: Gate): RESTPostAPIChannelMessageJSONBody['allowed_mentions'] {
  return { parse: [], users: [gate.requesterId, ...gate.approvers].filter(isSnowflake).slice(0, 100) };
}

function button(
  gate: Gate,
  channelId: string,
  action: DiscordAction,
  label: string,
  style: ButtonStyle.Primary | ButtonStyle.Secondary | ButtonStyle.Success | ButtonStyle.Danger,
) {
  return {
    type: ComponentType.Button as const,
    custom_id: encodeCustomId({ action, channelId, gateId: gate.id }),
    label,
    style,
  };
}

const intro = (reason: Reason, fresh: string) =>
  reason === 'reminder' ? '🔔 **Still waiting**' : reason === 'repost' ? '**Still open**' : fresh;

export function approvalMessage(
  gate: ApprovalGate,
  channelId: string,
  reason: Reason,
): RESTPostAPIChannelMessageJSONBody {
  const expires = gate.expiresAt ? `Expires <t:${Math.floor(gate.expiresAt / 1000)}:R>. ` : '';
  const budget = isBudgetGate(gate);
  const content = [
    budget
      ? `${intro(reason, '**Budget reached**')}: ${gate.subject}`
      : `${intro(reason, '**Approval needed**')}: \`${gate.toolName}\` requested by ${mention(gate.requesterId)}`,
    ...(budget ? [] : [argsPreview(gate.args, ARGS_PREVIEW_LIMIT)]),
    `${expires}${decidersLine(gate, mention)} ${typedDecisionHint((text) => `\`${text}\``)}`,
  ].join('\n');
  // Four-eyes and quorum prompts offer no Always allow (a grant would skip them), and a quorum no Edit.
  const guarded = isProtected(gate);
  const labels = choiceLabels(isBudgetGate(gate));
  return {
    content: cut(content, MESSAGE_LIMIT),
    allowed_mentions: allowedMentions(gate),
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          button(gate, channelId, 'approve', labels.approve, ButtonStyle.Success),
          // Deny opens a dialog for the reason: its label says so with "…".
          button(gate, channelId, 'deny', `${labels.deny}…`, ButtonStyle.Danger),
          ...(budget
            ? []
            : [
                ...(guarded
                  ? []
                  : [
                      button(
                        gate,
                        channelId,
                        'alwaysHere',
                        alwaysAllowLabel(gate.subject, 'session'),
                        ButtonStyle.Secondary,
                      ),
                      button(
                        gate,
                        channelId,
                        'alwaysEverywhere',
                        alwaysAllowLabel(gate.subject, 'user'),
                        ButtonStyle.Secondary,
                      ),
                    ]),
                ...((gate.approvalsNeeded ?? 1) > 1
                  ? []
                  : [button(gate, channelId, 'edit', 'Edit & approve…', ButtonStyle.Secondary)]),
              ]),
        ],
      },
    ],
  };
}

/** A question gate: a select menu per question with options, and buttons for free text and partial submits. */
export function questionMessage(
  gate: QuestionGate,
  channelId: string,
  reason: Reason,
): RESTPostAPIChannelMessageJSONBody {
  const rows: Row[] = [];
  gate.questions.forEach((q, index) => {
    if (!q.options.length || rows.length >= MAX_SELECTS) return;
    rows.push({
      type: ComponentType.ActionRow,
      components: [
        {
          type: ComponentType.StringSelect,
          custom_id: encodeCustomId({ action: 'select', channelId, gateId: gate.id, question: index }),
          placeholder: cut(`${q.label}: ${q.prompt}`, 150),
          min_values: 1,
          max_values: q.multi_select ? q.options.length : 1,
          options: q.options.map((o) => ({
            label: o.label,
            value: o.label,
            ...(o.description ? { description: cut(o.description, 100) } : {}),
          })),
        },
      ],
    });
  });
  const inWords = gate.questions.some((q) => q.allow_custom) ? 'Other…' : 'Answer in words…';
  const buttons = [button(gate, channelId, 'other', inWords, ButtonStyle.Secondary)];
  if (gate.questions.some((q) => !q.required))
    buttons.push(button(gate, channelId, 'submit', 'Submit answers', ButtonStyle.Primary));
  // A tool server's question may be declined: the server is told, and its call goes on without the answer.
  if (gate.asks) buttons.push(button(gate, channelId, 'deny', 'Decline…', ButtonStyle.Danger));
  rows.push({ type: ComponentType.ActionRow, components: buttons });
  const content = [
    gate.asks
      ? [
          reason === 'opened' ? '' : intro(reason, ''),
          questionIntro(gate, mention(gate.requesterId), (t) => `**${t}**`, escapeDiscordMarkdown),
        ]
          .filter(Boolean)
          .join(' · ')
      : `${intro(reason, '**Question for**')} ${mention(gate.requesterId)}`,
    questionsAsText(shownQuestions(gate, escapeDiscordMarkdown), (header) => `**${header}**`),
    gate.questions.length > 1
      ? '_Or pick an answer for each question below; they are sent once all are in._'
      : '_Or pick it below._',
  ]
    .filter(Boolean)
    .join('\n');
  // Whole: a long question set is posted in parts (gateMessageParts), never cut.
  return { content, allowed_mentions: allowedMentions(gate), components: rows };
}

/** A sign-in prompt: the button answers each clicker with their own private link (links are personal). */
export function credentialMessage(
  gate: CredentialGate,
  channelId: string,
  reason: Reason,
): RESTPostAPIChannelMessageJSONBody {
  return {
    content: `${intro(reason, '🔑 **Sign-in needed**')}: \`${gate.toolName}\` needs ${mention(gate.requesterId)}'s ${gate.providerName} account. The tool runs as soon as it is connected.${gate.note ? `\n${gate.note}` : ''}`,
    allowed_mentions: allowedMentions(gate),
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.Button,
            custom_id: encodeCustomId({
              action: 'connect',
              channelId,
              gateId: gate.id,
              provider: gate.provider,
            }),
            label: `Connect ${gate.providerName}`,
            style: ButtonStyle.Primary,
          },
        ],
      },
    ],
  };
}

/** The private reply to a Connect click: a link button to the clicker's own sign-in. */
export function connectLinkReply(providerName: string, url: string): { content: string; components: Row[] } {
  return {
    content: `This connects **your** ${providerName} account (the link is only for you, valid for a day).`,
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          { type: ComponentType.Button, style: ButtonStyle.Link, label: `Connect ${providerName}`, url },
        ],
      },
    ],
  };
}

/**
 * A gate's prompt as Discord takes it: the message with the buttons, and the text before it that does not fit
 * in one message (a long question set), posted first as plain messages. Nothing is cut.
 */
export function gateMessageParts(
  gate: Gate,
  channelId: string,
  reason: Reason,
): { leading: string[]; message: RESTPostAPIChannelMessageJSONBody } {
  const message = wholeGateMessage(gate, channelId, reason);
  const content = message.content ?? '';
  if (content.length <= MESSAGE_LIMIT) return { leading: [], message };
  const parts = splitForDiscord(content);
  return { leading: parts.slice(0, -1), message: { ...message, content: parts.at(-1)! } };
}

/** The message with the gate's buttons (the last part of a long prompt): what is posted, and edited later. */
export function gateMessage(
  gate: Gate,
  channelId: string,
  reason: Reason,
): RESTPostAPIChannelMessageJSONBody {
  return gateMessageParts(gate, channelId, reason).message;
}

function wholeGateMessage(gate: Gate, channelId: string, reason: Reason): RESTPostAPIChannelMessageJSONBody {
  const message =
    gate.kind === 'credential'
      ? credentialMessage(gate, channelId, reason)
      : gate.kind === 'approval'
        ? approvalMessage(gate, channelId, reason)
        : questionMessage(gate, channelId, reason);
  if (!gate.remote) return message;
  // A mission run's gate, shown in its owner's conversation: which mission is asking, and whom its run acts as.
  const name = gate.remote.missionName.replace(/[*_~`|\\]/g, '\\$&');
  return {
    ...message,
    content: `🔁 From the mission **${name}**, acting as ${mention(gate.requesterId)}\n${message.content ?? ''}`,
  };
}

const OUTCOME_ICON: Record<string, string> = {
  approved: '✅',
  edited: '✏️',
  always: '✅',
  denied: '⛔',
  answered: '💬',
  expired: '⌛',
  superseded: '↩️',
  cancelled: '❌',
};

/** The prompt after the decision: what was asked, who decided what and when; no components. */
export function decidedMessage(gate: Gate, outcome: string): RESTPostAPIChannelMessageJSONBody {
  const icon = OUTCOME_ICON[gate.resolution?.outcome ?? ''] ?? '';
  const subject = decidedSubject(gate, 'Question');
  const lines = [`${icon} ${subject}: ${discordMentions(outcome)}`.trim()];
  if (gate.kind === 'approval')
    lines.push(argsPreview(gate.resolution?.args ?? gate.args, ARGS_PREVIEW_LIMIT));
  if (gate.resolution?.reason) lines.push(`Reason: ${gate.resolution.reason}`);
  lines.push(...answerLines(gate, (text) => `**${text}**`, escapeDiscordMarkdown));
  return { content: cut(lines.join('\n'), MESSAGE_LIMIT), allowed_mentions: { parse: [] }, components: [] };
}

function textInput(
  customId: string,
  label: string,
  options: { value?: string; placeholder?: string; max?: number; required?: boolean; paragraph?: boolean },
) {
  return {
    type: ComponentType.Label as const,
    label: cut(label, 45),
    component: {
      type: ComponentType.TextInput as const,
      custom_id: customId,
      style: options.paragraph === false ? TextInputStyle.Short : TextInputStyle.Paragraph,
      required: options.required ?? false,
      max_length: options.max ?? 2_000,
      ...(options.value ? { value: options.value.slice(0, options.max ?? 4_000) } : {}),
      ...(options.placeholder ? { placeholder: cut(options.placeholder, 100) } : {}),
    },
  };
}

export function denyModal(channelId: string, gateId: string): APIModalInteractionResponseCallbackData {
  return {
    custom_id: encodeCustomId({ action: 'denyModal', channelId, gateId }),
    title: 'Deny',
    components: [textInput('reason', 'Why deny? (told to the agent)', { placeholder: 'Optional' })],
  };
}

/** Discord's text input holds 4,000 characters; larger arguments are decided as they are. */
export const DISCORD_ARGS_LIMIT = 4_000;

/** Built from the gate's memo (tool name and the arguments as text), so it opens while no worker runs. */
export function editModal(
  channelId: string,
  gate: { id: string; toolName: string; args: string },
): APIModalInteractionResponseCallbackData {
  return {
    custom_id: encodeCustomId({ action: 'editModal', channelId, gateId: gate.id }),
    title: cut(`Edit & approve ${gate.toolName}`, 45),
    components: [
      textInput('args', 'Arguments (JSON)', { value: gate.args, max: DISCORD_ARGS_LIMIT, required: true }),
    ],
  };
}

/**
 * Typed answers, one field per question (built from the questions alone, so it opens while no worker
 * runs): a number, numbers, an option's label, or the person's own words where allowed.
 */
export function answerModal(
  channelId: string,
  gate: { id: string; questions: readonly Question[] },
): APIModalInteractionResponseCallbackData {
  return {
    custom_id: encodeCustomId({ action: 'answerModal', channelId, gateId: gate.id }),
    title: 'Answer',
    components: gate.questions.slice(0, 5).map((q, index) =>
      textInput(String(index), `${index + 1}. ${q.label}`, {
        placeholder: q.options.length
          ? `${q.options.map((o, i) => `${i + 1}. ${o.label}`).join(', ')}${q.allow_custom ? ', or your own words' : ''}`
          : q.prompt,
        paragraph: false,
      }),
    ),
  };
}

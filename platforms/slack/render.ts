/**
 * Pure builders of what Slack shows: mrkdwn text, message chunks within Slack's limits, approval prompts
 * with buttons, their decided form, and the Deny / Edit modals. Unit-tested by structure.
 */
import type { KnownBlock, View } from '@slack/types';
import { slackifyMarkdown } from 'slackify-markdown';
import type { ApprovalGate, CredentialGate, Gate, GateButtonValue } from '../../workflows/session/contract';
import {
  answerLines,
  argsPreview as argsPreview_,
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

/** What an assistant thread shows under it while a turn runs (set by the gateway at once, then the worker). */
export const WORKING_STATUS = 'is working on it…';

/** Section text is limited to 3,000 characters; messages are split below that, never cut. */
export const SECTION_LIMIT = 3_000;
const ARGS_PREVIEW_LIMIT = 2_400;

/** `@U123` in workflow text becomes a real Slack mention. */
export function slackMentions(text: string): string {
  return text.replace(/@([UW][A-Z0-9]+)\b/g, '<@$1>');
}

export function toMrkdwn(markdown: string): string {
  return slackifyMarkdown(markdown).trimEnd();
}

/** Slack chunks: within a section's 3,000 characters, never cut mid-line when avoidable. */
export function splitForSlack(text: string, limit = SECTION_LIMIT): string[] {
  return splitMessage(text, limit);
}

export function argsPreview(args: unknown): string {
  return argsPreview_(args, ARGS_PREVIEW_LIMIT);
}

/** Feedback buttons' block id: names the answer they rate (the session comes from the message's thread). */
export const FEEDBACK_BLOCK_PREFIX = 'feedback:';

/** The last part of an answer in an assistant thread: its text, then 👍 / 👎 (action `answer_feedback`). */
export function answerWithFeedbackBlocks(text: string, messageId: string): KnownBlock[] {
  return [{ type: 'section', text: { type: 'mrkdwn', text } }, feedbackBlock(messageId)];
}

/** 👍 / 👎 under an answer (action `answer_feedback`; the block id names the message they rate). */
export function feedbackBlock(messageId: string): KnownBlock {
  const button = (emoji: string, value: 'good' | 'bad', label: string) => ({
    text: { type: 'plain_text' as const, text: emoji },
    value,
    accessibility_label: label,
  });
  return {
    type: 'context_actions',
    block_id: `${FEEDBACK_BLOCK_PREFIX}${messageId}`,
    elements: [
      {
        type: 'feedback_buttons',
        action_id: 'answer_feedback',
        positive_button: button('👍', 'good', 'This answer was helpful'),
        negative_button: button('👎', 'bad', 'This answer was not helpful'),
      },
    ],
  };
}

export function buttonValue(workflowId: string, gate: Gate, choice: GateButtonValue['choice']): string {
  return JSON.stringify({ workflowId, gateId: gate.id, choice } satisfies GateButtonValue);
}

const slackUser = (id: string) => `<@${id}>`;

export function approvalBlocks(
  gate: ApprovalGate,
  workflowId: string,
  reason: 'opened' | 'repost' | 'reminder',
): KnownBlock[] {
  const intro =
    reason === 'reminder'
      ? ':bell: *Still waiting for a decision*'
      : reason === 'repost'
        ? '*Still open*'
        : '*Approval needed*';
  const expires = gate.expiresAt
    ? `Expires ${new Date(gate.expiresAt).toISOString().replace('T', ' ').slice(0, 16)} UTC. `
    : '';
  const budget = isBudgetGate(gate);
  return [
    budget
      ? {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: `${intro.replace('Approval needed', 'Budget reached')}: ${slackMentions(gate.subject)}`,
          },
        }
      : {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: `${intro}: \`${gate.toolName}\` requested by <@${gate.requesterId}>`,
          },
        },
    ...(budget ? [] : [{ type: 'section', text: { type: 'mrkdwn', text: argsPreview(gate.args) } } as const]),
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `${expires}${decidersLine(gate, slackUser)} ${typedDecisionHint((text) => `\`${text}\``)}`,
        },
      ],
    },
    {
      type: 'actions',
      block_id: `gate:${gate.id}`,
      elements: approvalButtons(gate, workflowId),
    },
  ];
}

/** Four-eyes and quorum prompts offer no Always allow (a grant would skip them), and a quorum no Edit. */
function approvalButtons(gate: ApprovalGate, workflowId: string) {
  const button = (actionId: string, text: string, choice: GateButtonValue['choice']) => ({
    type: 'button' as const,
    action_id: actionId,
    text: { type: 'plain_text' as const, text },
    value: buttonValue(workflowId, gate, choice),
  });
  // Deny opens a dialog for the reason: its label says so with "…".
  const labels = choiceLabels(isBudgetGate(gate));
  const decide = [
    { ...button('gate_approve', labels.approve, 'approve'), style: 'primary' as const },
    { ...button('gate_deny', `${labels.deny}…`, 'deny'), style: 'danger' as const },
  ];
  if (isBudgetGate(gate)) return decide;
  const guarded = isProtected(gate);
  return [
    ...decide,
    ...(guarded
      ? []
      : [
          button('gate_always_session', alwaysAllowLabel(gate.subject, 'session'), 'always'),
          button('gate_always_user', alwaysAllowLabel(gate.subject, 'user'), 'always'),
        ]),
    ...((gate.approvalsNeeded ?? 1) > 1 ? [] : [button('gate_edit', 'Edit & approve…', 'edit')]),
  ];
}

/** Text shown as written: no links, mentions or channel-wide pings from what others wrote. */
const escapeMrkdwn = (text: string) =>
  text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);

/** A question gate in Slack: every question numbered as text and a button opening the answer form (a modal). */
export function questionBlocks(gate: Gate, workflowId: string): KnownBlock[] {
  if (gate.kind !== 'question') return [];
  const text = questionsAsText(shownQuestions(gate, escapeMrkdwn, escapeMrkdwn), (header) => `*${header}*`);
  // A long question set takes several sections (each holds 3,000 characters): never cut, the reply hint last.
  const parts = splitForSlack(
    `${questionIntro(gate, `<@${gate.requesterId}>`, (t) => `*${t}*`, escapeMrkdwn)}\n${text}\n_Type the reply in this thread, or press Answer…_`,
    SECTION_LIMIT - 40, // room for "(part i of n)"
  );
  return [
    ...parts.map((part): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text: part } })),
    {
      type: 'actions',
      block_id: `gate:${gate.id}`,
      elements: [
        {
          type: 'button',
          action_id: 'gate_answer',
          text: { type: 'plain_text', text: 'Answer…' },
          style: 'primary',
          value: buttonValue(workflowId, gate, 'approve'),
        },
        // A tool server's question may be declined: the server is told, and its call goes on without the answer.
        ...(gate.asks
          ? [
              {
                type: 'button' as const,
                action_id: 'gate_deny',
                text: { type: 'plain_text' as const, text: 'Decline…' },
                style: 'danger' as const,
                value: buttonValue(workflowId, gate, 'deny'),
              },
            ]
          : []),
      ],
    },
  ];
}

/** A sign-in prompt: the button answers each clicker with their own private link (links are personal). */
export function credentialBlocks(
  gate: CredentialGate,
  reason: 'opened' | 'repost' | 'reminder',
): KnownBlock[] {
  const intro =
    reason === 'opened'
      ? ':key: *Sign-in needed*'
      : reason === 'reminder'
        ? ':bell: *Still waiting*'
        : '*Still open*';
  return [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `${intro}: \`${gate.toolName}\` needs <@${gate.requesterId}>'s ${gate.providerName} account. The tool runs as soon as it is connected.${gate.note ? `\n${gate.note}` : ''}`,
      },
    },
    {
      type: 'actions',
      block_id: `gate:${gate.id}`,
      elements: [
        {
          type: 'button',
          action_id: 'gate_connect',
          text: { type: 'plain_text', text: `Connect ${gate.providerName}` },
          style: 'primary',
          value: JSON.stringify({ provider: gate.provider }),
        },
      ],
    },
  ];
}

/**
 * The requester's private "working" note with a Stop button (shown only to them; the workflow still checks who
 * may stop). Its value is the conversation's address, nothing secret.
 */
export function workingBlocks(workflowId: string): KnownBlock[] {
  return [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: 'Working on it. To stop this turn, use the button or type `stop` here.' },
      accessory: {
        type: 'button',
        action_id: 'turn_stop',
        style: 'danger',
        text: { type: 'plain_text', text: '■ Stop' },
        value: JSON.stringify({ workflowId }),
      },
    },
  ];
}

/** The private reply to a Connect click: the clicker's own sign-in link. */
export function connectLinkBlocks(providerName: string, url: string): KnownBlock[] {
  return [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `This connects *your* ${providerName} account (the link is only for you, valid for a day).`,
      },
      accessory: {
        type: 'button',
        action_id: 'gate_connect_link',
        text: { type: 'plain_text', text: `Connect ${providerName}` },
        url,
      },
    },
  ];
}

export function gateBlocks(
  gate: Gate,
  workflowId: string,
  reason: 'opened' | 'repost' | 'reminder',
): KnownBlock[] {
  const blocks =
    gate.kind === 'credential'
      ? credentialBlocks(gate, reason)
      : gate.kind === 'approval'
        ? approvalBlocks(gate, workflowId, reason)
        : questionBlocks(gate, workflowId);
  return gate.remote ? [missionContext(gate.remote.missionName, gate.requesterId), ...blocks] : blocks;
}

/** A mission run's gate, shown in its owner's conversation: which mission is asking, and whom its run acts as. */
function missionContext(missionName: string, actsAs: string): KnownBlock {
  const escape = escapeMrkdwn;
  return {
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: `:repeat: From the mission *${escape(missionName)}*, acting as <@${escape(actsAs)}>`,
      },
    ],
  };
}

const OUTCOME_ICON: Record<string, string> = {
  approved: ':white_check_mark:',
  edited: ':pencil2:',
  always: ':white_check_mark:',
  denied: ':no_entry:',
  answered: ':speech_balloon:',
  expired: ':hourglass:',
  superseded: ':leftwards_arrow_with_hook:',
  cancelled: ':x:',
};

/** The prompt after the decision: what was asked, and who decided what and when; no buttons. */
export function decidedBlocks(gate: Gate, outcome: string): KnownBlock[] {
  const icon = OUTCOME_ICON[gate.resolution?.outcome ?? ''] ?? '';
  const subject = decidedSubject(gate, 'question');
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: `${icon} ${subject}: ${slackMentions(outcome)}`.trim() },
    },
  ];
  if (gate.kind === 'approval')
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: argsPreview(gate.resolution?.args ?? gate.args) },
    });
  if (gate.resolution?.reason)
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `Reason: ${gate.resolution.reason}` }],
    });
  for (const line of answerLines(gate, (text) => `*${text}*`, escapeMrkdwn))
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: line }] });
  return blocks;
}

/** The frame every gate dialog shares: its callback id, the button value it came from, title and submit. */
export function gateModal(
  callbackId: string,
  privateMetadata: string,
  title: string,
  submit: string,
  blocks: View['blocks'],
): View {
  return {
    type: 'modal',
    callback_id: callbackId,
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: title },
    submit: { type: 'plain_text', text: submit },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks,
  };
}

export function denyModal(privateMetadata: string, toolName: string): View {
  return gateModal('gate_deny', privateMetadata, 'Deny', 'Deny', [
    {
      type: 'input',
      block_id: 'reason',
      optional: true,
      label: { type: 'plain_text', text: `Why deny ${toolName}? (told to the agent)` },
      element: { type: 'plain_text_input', action_id: 'value', multiline: true, max_length: 2000 },
    },
  ]);
}

/** Slack's text input holds 3,000 characters; larger arguments are decided as they are. */
export const SLACK_ARGS_LIMIT = 3_000;

/** Built from the gate's memo (tool name and arguments), so it opens while no worker runs. */
export function editModal(privateMetadata: string, gate: { toolName: string; args: string }): View {
  return gateModal('gate_edit', privateMetadata, 'Edit & approve', 'Approve', [
    {
      type: 'input',
      block_id: 'args',
      label: { type: 'plain_text', text: `Arguments for ${gate.toolName} (JSON)` },
      element: {
        type: 'plain_text_input',
        action_id: 'value',
        multiline: true,
        max_length: SLACK_ARGS_LIMIT,
        initial_value: gate.args,
      },
    },
  ]);
}

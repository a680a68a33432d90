/**
 * Discord interactions over HTTP (`POST /discord/interactions`): verified with Ed25519 and
 * DISCORD_PUBLIC_KEY, then turned into signals. Every interaction is answered inside Discord's 3 seconds,
 * also while every worker is down: signals need only the Temporal server, and the wait for the
 * workflow's verdict (to answer the clicker ephemerally) is bounded. Later edits of prompts are done by
 * the workflow with the bot token, so a click the next day still updates its message.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { verifyKey } from 'discord-interactions';
import {
  InteractionResponseType,
  InteractionType,
  MessageFlags,
  type APIInteractionResponse,
} from 'discord-api-types/v10';
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { Logger } from '../../infra/log';
import type { Sessions } from '../../gateways/sessions';
import type { AnswerDraft, Decision } from '../../workflows/session/contract';
import type { GatePrompt } from '../../gateways/sessions';
import { argsTooLarge, editableArgs } from '../../gateways/dialog-args';
import { decodeCustomId, discordSessionWorkflowId, type DiscordCustomId } from './ids';
import type { LateFeedback } from './late-feedback';
import {
  answerModal,
  connectLinkReply,
  denyModal,
  discordMentions,
  DISCORD_ARGS_LIMIT,
  editModal,
} from './render';
import { bodyLimits } from '../../gateways/body-limits';

/**
 * Discord's own limit is 3 s; every interaction is answered within FIRST_ANSWER_MS (deferred when the
 * verdict takes longer, then followed up), and a dialog's memo read is bounded by DIALOG_BUDGET_MS.
 */
export const SIGNAL_BUDGET_MS = 1_200;
const FIRST_ANSWER_MS = 500;
const DIALOG_BUDGET_MS = 800;
const VERDICT_BUDGET_MS = 1_300;
const VERDICT_POLL_MS = 120;
/** Requests signed longer ago than this are refused as replays. */
const MAX_SIGNATURE_AGE_S = 300;
const MAX_BODY_BYTES = 64 * 1024;

const snowflake = z.string().regex(/^\d{17,20}$/);
const userSchema = z.object({ id: snowflake });

/** The fields of an interaction this gateway reads; the rest is ignored. */
const interactionSchema = z.object({
  id: snowflake,
  type: z.number().int(),
  token: z.string().min(1).max(500).optional(),
  // Only for follow-ups; an odd one must not cost the interaction itself.
  application_id: z
    .string()
    .regex(/^\d{1,20}$/)
    .optional()
    .catch(undefined),
  channel_id: snowflake.optional(),
  member: z.object({ user: userSchema }).optional(),
  user: userSchema.optional(),
  data: z
    .object({
      name: z.string().max(32).optional(),
      custom_id: z.string().max(100).optional(),
      values: z.array(z.string().max(100)).max(25).optional(),
      options: z.array(z.unknown()).max(25).optional(),
      components: z.array(z.unknown()).max(5).optional(),
    })
    .optional(),
});
type Interaction = z.infer<typeof interactionSchema>;

const commandOptionSchema = z.object({
  name: z.string(),
  type: z.number(),
  value: z.unknown().optional(),
  options: z.array(z.object({ name: z.string(), value: z.unknown() })).optional(),
});

const USAGE = 'Usage: `/agent ask text:<your message>`, `/agent pending` or `/agent stop`.';

/** A private reply; people are named as mentions (shown as names, pinging no one). */
const ephemeral = (content: string): APIInteractionResponse => ({
  type: InteractionResponseType.ChannelMessageWithSource,
  data: {
    content: discordMentions(content).slice(0, 2_000),
    flags: MessageFlags.Ephemeral,
    allowed_mentions: { parse: [] },
  },
});
const deferUpdate: APIInteractionResponse = { type: InteractionResponseType.DeferredMessageUpdate };
const UNREACHABLE =
  'Your click could not be recorded right now (the conversation is unreachable). Nothing changed; please try again.';
const RECORDED =
  'Your click is recorded. The agent is not answering right now (restarting, or busy); it will act on it as soon as it can.';
const RECORDED_UNJUDGED = `${RECORDED.slice(0, -1)}, and tell you here if it cannot take it.`;
const NOT_OPEN =
  "This is not open here, or the agent's server cannot be reached right now; try again in a moment.";

/** Every text input of a submitted modal, by custom_id, whatever the layout (labels or action rows). */
export function modalValues(components: unknown): Map<string, string> {
  const values = new Map<string, string>();
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as { custom_id?: unknown; value?: unknown; component?: unknown; components?: unknown };
    if (typeof n.custom_id === 'string' && typeof n.value === 'string') values.set(n.custom_id, n.value);
    visit(n.component);
    if (Array.isArray(n.components)) n.components.forEach(visit);
  };
  if (Array.isArray(components)) components.forEach(visit);
  return values;
}

export function discordInteractionsApp(options: {
  publicKey: string;
  sessions: Sessions;
  log: Logger;
  /** The clicker's personal sign-in link for a provider, or undefined when it is not configured here. */
  connect: (userId: string, provider: string) => { url: string; providerName: string } | undefined;
  /** Tells a clicker later, privately, when the verdict on their click came after the interaction's reply. */
  lateFeedback?: LateFeedback;
}): Hono {
  const { publicKey, sessions, log } = options;
  const app = new Hono();
  app.use('*', bodyLimits());

  app.post('/discord/interactions', async (c) => {
    const signature = c.req.header('x-signature-ed25519') ?? '';
    const timestamp = c.req.header('x-signature-timestamp') ?? '';
    const raw = await c.req.arrayBuffer();
    if (raw.byteLength > MAX_BODY_BYTES) return c.text('request body too large', 413);
    const body = Buffer.from(raw);
    if (!(await verified(body, signature, timestamp, publicKey)))
      return c.text('invalid request signature', 401);
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SIGNATURE_AGE_S)
      return c.text('request signature is too old (replayed?)', 401);
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return c.text('body is not JSON', 400);
    }
    const parsed = interactionSchema.safeParse(json);
    if (!parsed.success) return c.text(`not an interaction: ${parsed.error.issues[0]?.message}`, 400);
    const interaction = parsed.data;
    if (interaction.type === InteractionType.Ping) return c.json({ type: InteractionResponseType.Pong });
    const userId = interaction.member?.user.id ?? interaction.user?.id;
    if (!userId || !interaction.channel_id) return c.text('interaction without a user or channel', 400);
    const context = { interaction, userId, channelId: interaction.channel_id };
    switch (interaction.type) {
      case InteractionType.ApplicationCommand:
        return reply(c, await command(context));
      case InteractionType.MessageComponent:
      case InteractionType.ModalSubmit: {
        const custom = decodeCustomId(interaction.data?.custom_id);
        if (!custom)
          return reply(c, ephemeral('That control is not one of ours or is malformed; nothing was done.'));
        const handler = interaction.type === InteractionType.ModalSubmit ? modalSubmit : component;
        return reply(c, await handler({ ...context, custom }));
      }
      default:
        return c.text(`interaction type ${interaction.type} is not handled`, 400);
    }
  });
  app.all('/discord/interactions', (c) => c.text('use POST', 405));
  app.all('/discord/*', (c) => c.text('not found', 404));

  const reply = (c: Context, response: APIInteractionResponse) => c.json(response);

  interface Ctx {
    interaction: Interaction;
    userId: string;
    channelId: string;
  }

  async function command({ interaction, userId, channelId }: Ctx): Promise<APIInteractionResponse> {
    const sub = commandOptionSchema.safeParse(interaction.data?.options?.[0]);
    const workflowId = discordSessionWorkflowId(channelId);
    if (interaction.data?.name !== 'agent' || !sub.success) return ephemeral(USAGE);
    if (sub.data.name === 'ask') {
      const text = sub.data.options?.find((o) => o.name === 'text')?.value;
      if (typeof text !== 'string' || !text.trim())
        return ephemeral('Usage: `/agent ask text:<your message>`: the message is missing.');
      try {
        await sessions.start(workflowId, {
          messageId: `interaction:${interaction.id}`,
          userId,
          text: text.trim().slice(0, 20_000),
        });
      } catch (error) {
        log.warn('discord command not delivered', { workflowId, error: (error as Error).message });
        return ephemeral(
          `Your message could not be delivered right now; please try again. It was:\n> ${text.slice(0, 1_800)}`,
        );
      }
      log.info('discord message accepted', { workflowId, userId });
      // The reply is the visible question in the channel; the agent's answers follow as bot messages.
      return {
        type: InteractionResponseType.ChannelMessageWithSource,
        data: { content: `<@${userId}>: ${text.trim()}`.slice(0, 2_000), allowed_mentions: { parse: [] } },
      };
    }
    if (sub.data.name === 'pending') {
      const waiting = await sessions.waitingWithPrefix(workflowId).catch(() => [] as string[]);
      if (!waiting.includes(workflowId))
        return ephemeral('Nothing is waiting for a decision in this channel.');
      try {
        await sessions.repostPending(workflowId, userId);
      } catch {
        return ephemeral(UNREACHABLE);
      }
      return ephemeral('Re-posting what is waiting here, with fresh buttons.');
    }
    if (sub.data.name === 'stop') {
      // Both at once, within Discord's 3 seconds; a stop with nothing running changes nothing in the workflow.
      let status: string | undefined;
      try {
        [status] = await Promise.all([
          sessions.status(workflowId),
          sessions.stop(workflowId, userId).catch((error: unknown) => {
            // No conversation in this channel: nothing to stop, which the status says.
            if (!(error instanceof WorkflowNotFoundError)) throw error;
          }),
        ]);
      } catch {
        return ephemeral(UNREACHABLE);
      }
      if (!status || status === 'idle') return ephemeral('Nothing is running in this channel.');
      // Discord gets no later private notes from the workflow, so the rule is said here.
      return ephemeral(
        'Stop sent: the turn stops in a moment if you asked for it or are an approver (anyone else’s stop changes nothing).',
      );
    }
    return ephemeral(USAGE);
  }

  async function component(ctx: Ctx & { custom: DiscordCustomId }): Promise<APIInteractionResponse> {
    const { custom, userId, interaction } = ctx;
    const workflowId = discordSessionWorkflowId(custom.channelId);
    const gateId = custom.gateId;
    switch (custom.action) {
      case 'approve':
        return await decide(interaction, workflowId, { gateId, choice: 'approve', userId });
      case 'alwaysHere':
        return await decide(interaction, workflowId, { gateId, choice: 'always', scope: 'session', userId });
      case 'alwaysEverywhere':
        return await decide(interaction, workflowId, { gateId, choice: 'always', scope: 'user', userId });
      case 'deny':
        return { type: InteractionResponseType.Modal, data: denyModal(custom.channelId, gateId) };
      case 'edit': {
        const gate = await gatePrompt(workflowId, gateId);
        if (gate?.kind !== 'approval') return ephemeral(NOT_OPEN);
        const args = editableArgs(gate.args, DISCORD_ARGS_LIMIT);
        if (args === undefined)
          return ephemeral(argsTooLarge(gate.toolName, gate.argsChars, DISCORD_ARGS_LIMIT));
        return {
          type: InteractionResponseType.Modal,
          data: editModal(custom.channelId, { id: gateId, toolName: gate.toolName, args }),
        };
      }
      case 'other': {
        const gate = await gatePrompt(workflowId, gateId);
        if (gate?.kind !== 'question') return ephemeral(NOT_OPEN);
        return { type: InteractionResponseType.Modal, data: answerModal(custom.channelId, gate) };
      }
      case 'select':
        return await draft(interaction, workflowId, {
          gateId,
          userId,
          picks: [{ index: custom.question!, selected: interaction.data?.values ?? [] }],
        });
      case 'submit':
        return await draft(interaction, workflowId, { gateId, userId, submit: true });
      case 'connect': {
        const link = options.connect(userId, custom.provider!);
        if (!link) return ephemeral(`No provider "${custom.provider}" is configured on this gateway.`);
        return {
          type: InteractionResponseType.ChannelMessageWithSource,
          data: { ...connectLinkReply(link.providerName, link.url), flags: MessageFlags.Ephemeral },
        };
      }
      default:
        return ephemeral('That control is not one of ours or is malformed; nothing was done.');
    }
  }

  async function modalSubmit(ctx: Ctx & { custom: DiscordCustomId }): Promise<APIInteractionResponse> {
    const { custom, userId, interaction } = ctx;
    const workflowId = discordSessionWorkflowId(custom.channelId);
    const values = modalValues(interaction.data?.components);
    switch (custom.action) {
      case 'denyModal': {
        const reason = values.get('reason')?.trim().slice(0, 2_000);
        return await decide(interaction, workflowId, {
          gateId: custom.gateId,
          choice: 'deny',
          userId,
          ...(reason ? { reason } : {}),
        });
      }
      case 'editModal': {
        const text = values.get('args') ?? '';
        const args = parseJsonObject(text);
        if (!args)
          return ephemeral(
            `Those arguments are not a JSON object (e.g. {"command": "ls"}); nothing was approved. What you entered:\n\`\`\`${text.slice(0, 1_700)}\`\`\``,
          );
        return await decide(interaction, workflowId, { gateId: custom.gateId, choice: 'edit', args, userId });
      }
      case 'answerModal': {
        const texts = [...values]
          .filter(([key, value]) => /^[0-4]$/.test(key) && value.trim())
          .map(([key, value]) => ({ index: Number(key), text: value.trim().slice(0, 2_000) }));
        if (!texts.length) return ephemeral('No answer was entered; the question is still open.');
        return await draft(interaction, workflowId, { gateId: custom.gateId, userId, texts });
      }
      default:
        return ephemeral('That form is not one of ours or is malformed; nothing was done.');
    }
  }

  /** A dialog is built from the gate's memo, which the server serves while no worker runs. */
  async function gatePrompt(workflowId: string, gateId: string): Promise<GatePrompt | undefined> {
    return await sessions.gatePrompt(workflowId, gateId, DIALOG_BUDGET_MS).catch((error: Error) => {
      log.warn('discord dialog not opened', { workflowId, error: error.message });
      return undefined;
    });
  }

  async function decide(
    interaction: Interaction,
    workflowId: string,
    decision: Decision,
  ): Promise<APIInteractionResponse> {
    return await signalThenReport(interaction, workflowId, decision.gateId, decision.userId, () =>
      sessions.decide(workflowId, decision),
    );
  }

  async function draft(
    interaction: Interaction,
    workflowId: string,
    value: AnswerDraft,
  ): Promise<APIInteractionResponse> {
    return await signalThenReport(interaction, workflowId, value.gateId, value.userId, () =>
      sessions.answerDraft(workflowId, value),
    );
  }

  /**
   * Signals, then waits briefly for the workflow's verdict: a refusal (not allowed, already decided,
   * invalid answer) is shown to the clicker only; an accepted click is acknowledged and the workflow
   * edits the prompt for everyone. With no worker running, the click is recorded durably, the clicker is
   * told so, and a refusal that comes later reaches them as an ephemeral follow-up.
   */
  async function signalThenReport(
    interaction: Interaction,
    workflowId: string,
    gateId: string,
    userId: string,
    signal: () => Promise<void>,
  ): Promise<APIInteractionResponse> {
    const verdict = verdictOf(interaction, workflowId, gateId, userId, signal);
    const { lateFeedback } = options;
    const { token, application_id: applicationId } = interaction;
    if (!lateFeedback || !token || !applicationId) return await verdict;
    let timer: NodeJS.Timeout | undefined;
    const first = await Promise.race([
      verdict,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), FIRST_ANSWER_MS))),
    ]);
    clearTimeout(timer);
    if (first) return first;
    // Deferred: nothing shows yet; the verdict follows privately on the interaction's webhook.
    void verdict
      .then(async (response) => {
        const content =
          response.type === InteractionResponseType.ChannelMessageWithSource
            ? response.data?.content
            : undefined;
        if (content) await lateFeedback.followUp({ applicationId, token }, content);
      })
      .catch((error: Error) => log.warn('discord follow-up failed', { workflowId, error: error.message }));
    return deferUpdate;
  }

  /** The signal, then a bounded wait for the workflow's verdict (see signalThenReport). */
  async function verdictOf(
    interaction: Interaction,
    workflowId: string,
    gateId: string,
    userId: string,
    signal: () => Promise<void>,
  ): Promise<APIInteractionResponse> {
    const since = Date.now() - 1_000;
    const started = Date.now();
    try {
      await signal(); // bounded by the sessions' deadline (SIGNAL_BUDGET_MS)
    } catch (error) {
      if (error instanceof WorkflowNotFoundError)
        return ephemeral('That conversation has ended (or never existed here); nothing changed.');
      log.warn('discord click not recorded', { workflowId, error: (error as Error).message });
      return ephemeral(UNREACHABLE);
    }
    const deadline = started + SIGNAL_BUDGET_MS + VERDICT_BUDGET_MS;
    while (Date.now() < deadline) {
      const left = deadline - Date.now();
      const feedback = await sessions
        .feedback(workflowId, { gateId, userId, since }, Math.max(50, left))
        .catch(() => undefined);
      if (!feedback) break; // no worker answering: the click waits durably
      if (feedback.notices.length) return ephemeral(feedback.notices.map((n) => n.text).join('\n'));
      const gate = feedback.gate;
      if (gate && gate.status !== 'pending') return deferUpdate;
      if (gate?.kind === 'question' && gate.drafts?.[userId]) {
        const answered = new Set(gate.drafts[userId].map((a) => a.question));
        const open = gate.questions.filter((q) => !answered.has(q.label)).map((q) => q.label);
        if (open.length < gate.questions.length)
          return ephemeral(`Noted. Still to answer: ${open.join(', ')}.`);
      }
      await new Promise((resolve) => setTimeout(resolve, VERDICT_POLL_MS));
    }
    const { lateFeedback } = options;
    const watched =
      lateFeedback !== undefined &&
      interaction.token !== undefined &&
      interaction.application_id !== undefined &&
      lateFeedback.watch({
        applicationId: interaction.application_id,
        token: interaction.token,
        workflowId,
        gateId,
        userId,
        since,
      });
    return ephemeral(watched ? RECORDED_UNJUDGED : RECORDED);
  }

  return app;
}

async function verified(
  body: Buffer,
  signature: string,
  timestamp: string,
  publicKey: string,
): Promise<boolean> {
  if (!/^[0-9a-f]{128}$/i.test(signature) || !/^\d{1,12}$/.test(timestamp)) return false;
  try {
    return await verifyKey(body, signature, timestamp, publicKey);
  } catch {
    return false;
  }
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

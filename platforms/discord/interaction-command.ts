/** The `/agent` slash command: `ask` a message, re-post what is `pending`, `stop` the running turn. */
import { WorkflowNotFoundError } from '@temporalio/client';
import { InteractionResponseType, type APIInteractionResponse } from 'discord-api-types/v10';
import { z } from 'zod';
import { discordSessionWorkflowId } from './ids';
import {
  ephemeral,
  UNREACHABLE,
  type Interaction,
  type InteractionContext,
  type InteractionDeps,
} from './interaction-context';

const commandOptionSchema = z.object({
  name: z.string(),
  type: z.number(),
  value: z.unknown().optional(),
  options: z.array(z.object({ name: z.string(), value: z.unknown() })).optional(),
});
type CommandOption = z.infer<typeof commandOptionSchema>;

const USAGE = 'Usage: `/agent ask text:<your message>`, `/agent pending` or `/agent stop`.';

export async function command(
  deps: InteractionDeps,
  { interaction, userId, channelId }: InteractionContext,
): Promise<APIInteractionResponse> {
  const sub = commandOptionSchema.safeParse(interaction.data?.options?.[0]);
  const workflowId = discordSessionWorkflowId(channelId);
  if (interaction.data?.name !== 'agent' || !sub.success) return ephemeral(USAGE);
  if (sub.data.name === 'ask') return await ask(deps, interaction, userId, workflowId, sub.data);
  if (sub.data.name === 'pending') return await pending(deps, userId, workflowId);
  if (sub.data.name === 'stop') return await stop(deps, userId, workflowId);
  return ephemeral(USAGE);
}

async function ask(
  { sessions, log }: InteractionDeps,
  interaction: Interaction,
  userId: string,
  workflowId: string,
  sub: CommandOption,
): Promise<APIInteractionResponse> {
  const text = sub.options?.find((o) => o.name === 'text')?.value;
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

async function pending(
  { sessions }: InteractionDeps,
  userId: string,
  workflowId: string,
): Promise<APIInteractionResponse> {
  const waiting = await sessions.waitingWithPrefix(workflowId).catch(() => [] as string[]);
  if (!waiting.includes(workflowId)) return ephemeral('Nothing is waiting for a decision in this channel.');
  try {
    await sessions.repostPending(workflowId, userId);
  } catch {
    return ephemeral(UNREACHABLE);
  }
  return ephemeral('Re-posting what is waiting here, with fresh buttons.');
}

async function stop(
  { sessions }: InteractionDeps,
  userId: string,
  workflowId: string,
): Promise<APIInteractionResponse> {
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

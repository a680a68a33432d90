/**
 * What the Discord interaction handlers share: the context discordInteractionsApp hands them, the fields of
 * an interaction this gateway reads, and the replies every handler may give.
 */
import { InteractionResponseType, MessageFlags, type APIInteractionResponse } from 'discord-api-types/v10';
import { z } from 'zod';
import type { Logger } from '../../infra/log';
import type { Sessions } from '../../gateways/sessions';
import type { DiscordCustomId } from './ids';
import type { LateClickOutcome } from './late-click-outcome';
import { discordMentions } from './render';

/** The state every handler needs, passed explicitly rather than captured. */
export interface InteractionDeps {
  sessions: Sessions;
  log: Logger;
  /** The clicker's personal sign-in link for a provider, or undefined when it is not configured here. */
  connect: (userId: string, provider: string) => { url: string; providerName: string } | undefined;
  /** Tells a clicker later, privately, when the verdict on their click came after the interaction's reply. */
  lateOutcomes?: LateClickOutcome;
}

const snowflake = z.string().regex(/^\d{17,20}$/);
const userSchema = z.object({ id: snowflake });

/** The fields of an interaction this gateway reads; the rest is ignored. */
export const interactionSchema = z.object({
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
export type Interaction = z.infer<typeof interactionSchema>;

/** One verified interaction, with who sent it and where. */
export interface InteractionContext {
  interaction: Interaction;
  userId: string;
  channelId: string;
}

/** A component click or modal submission, with its decoded custom_id. */
export type ControlContext = InteractionContext & { custom: DiscordCustomId };

/** A private reply; people are named as mentions (shown as names, pinging no one). */
export const ephemeral = (content: string): APIInteractionResponse => ({
  type: InteractionResponseType.ChannelMessageWithSource,
  data: {
    content: discordMentions(content).slice(0, 2_000),
    flags: MessageFlags.Ephemeral,
    allowed_mentions: { parse: [] },
  },
});
export const deferUpdate: APIInteractionResponse = { type: InteractionResponseType.DeferredMessageUpdate };
export const UNREACHABLE =
  'Your click could not be recorded right now (the conversation is unreachable). Nothing changed; please try again.';

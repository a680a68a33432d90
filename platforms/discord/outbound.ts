/**
 * Discord outbound: carries a session's outbound events to the REST API with the bot token (never an
 * interaction token, which dies after 15 minutes: a prompt decided the next day is still edited).
 * Runs inside the worker's `deliver` activity.
 */
import { createHash } from 'node:crypto';
import { DiscordAPIError, type REST } from '@discordjs/rest';
import { MessageFlags, Routes, type APIMessage } from 'discord-api-types/v10';
import {
  FROM_FIRST_PART,
  type DeliveryResult,
  type OutboundEvent,
  type PartProgress,
} from '../../workflows/session/outbound';
import { parseDiscordSessionId } from './ids';
import { decidedMessage, discordMentions, gateMessage, gateMessageParts, splitForDiscord } from './render';
import { discordRest } from './rest';

const WORKING_REACTION = encodeURIComponent('⏳');
/** Discord's JSON error codes for a message or channel that no longer exists. */
const GONE = new Set([10003, 10008]);

export class DiscordOutbound {
  private readonly rest: REST;
  /** Message flags of an agent's text: no link previews (embeds) unless the policy's `linkPreviews.discord`. */
  private readonly textFlags: { flags?: number };

  constructor(options: { botToken: string; apiUrl: string | undefined; linkPreviews?: boolean }) {
    this.rest = discordRest(options);
    this.textFlags = options.linkPreviews ? {} : { flags: MessageFlags.SuppressEmbeds };
  }

  /** Streamed answers: the text so far, posted in the channel, marked as still being written. */
  async streamPost(sessionId: string, text: string): Promise<string> {
    const posted = (await this.rest.post(Routes.channelMessages(this.channelOf(sessionId)), {
      body: { content: writing(text), allowed_mentions: { parse: [] }, ...this.textFlags },
    })) as APIMessage;
    return posted.id;
  }

  /** Discord allows 5 edits per 5 s in a channel: one a second leaves room for prompts. */
  streamEditEveryMs(): number {
    return 1_200;
  }
  readonly streamChars = 1_900;

  async streamEdit(
    sessionId: string,
    ref: string,
    text: string,
    { final }: { final: boolean },
  ): Promise<void> {
    await this.rest.patch(Routes.channelMessage(this.channelOf(sessionId), ref), {
      body: {
        content: final ? text.slice(0, 2_000) : writing(text),
        allowed_mentions: { parse: [] },
        ...this.textFlags,
      },
    });
  }

  /** Edits a streamed message into its final form; false when it is gone (the answer is then posted anew). */
  private async replace(channelId: string, messageId: string, content: string): Promise<boolean> {
    try {
      await this.rest.patch(Routes.channelMessage(channelId, messageId), {
        body: { content, allowed_mentions: { parse: ['users'] }, ...this.textFlags },
      });
      return true;
    } catch (error) {
      if (error instanceof DiscordAPIError && typeof error.code === 'number' && GONE.has(error.code))
        return false;
      throw error;
    }
  }

  private channelOf(sessionId: string): string {
    const channelId = parseDiscordSessionId(sessionId);
    if (!channelId) throw new Error(`${sessionId} is not a Discord session id`);
    return channelId;
  }

  /** `progress`: a long answer posted in parts goes on where an earlier attempt stopped (see PartProgress). */
  async deliver(
    sessionId: string,
    event: OutboundEvent,
    progress: PartProgress = FROM_FIRST_PART,
  ): Promise<DeliveryResult> {
    const channelId = parseDiscordSessionId(sessionId);
    if (!channelId) throw new Error(`${sessionId} is not a Discord session id`);
    switch (event.type) {
      case 'message': {
        const parts = splitForDiscord(discordMentions(event.text));
        for (let part = progress.from; part < parts.length; part++) {
          // The answer was streamed into a message while written: its first part takes that message's place.
          if (part === 0 && event.replaces && (await this.replace(channelId, event.replaces, parts[0]!))) {
            progress.onPosted(1);
            continue;
          }
          await this.rest.post(Routes.channelMessages(channelId), {
            body: {
              content: parts[part]!,
              allowed_mentions: { parse: ['users'] },
              ...this.textFlags,
              ...onlyOnce(progress.key, part),
            },
          });
          progress.onPosted(part + 1);
        }
        return {};
      }
      case 'gate': {
        // A long question set: its first parts as plain messages (a retry goes on where it stopped), then the
        // message with the buttons.
        const { leading, message } = gateMessageParts(event.gate, channelId, event.reason);
        for (let part = progress.from; part < leading.length; part++) {
          await this.rest.post(Routes.channelMessages(channelId), {
            body: {
              content: leading[part]!,
              allowed_mentions: message.allowed_mentions,
              ...onlyOnce(progress.key, part),
            },
          });
          progress.onPosted(part + 1);
        }
        const posted = (await this.rest.post(Routes.channelMessages(channelId), {
          body: { ...message, ...onlyOnce(progress.key, leading.length) },
        })) as APIMessage;
        return { ref: posted.id };
      }
      case 'gate_updated': {
        for (const messageId of event.gate.posts ?? [])
          await this.ignoreGone(() =>
            this.rest.patch(Routes.channelMessage(channelId, messageId), {
              body: gateMessage(event.gate, channelId, 'opened'),
            }),
          );
        return {};
      }
      case 'gate_resolved': {
        for (const messageId of event.gate.posts ?? []) {
          await this.ignoreGone(() =>
            this.rest.patch(Routes.channelMessage(channelId, messageId), {
              body: decidedMessage(event.gate, event.outcome),
            }),
          );
        }
        return {};
      }
      case 'notice':
        // Discord shows personal feedback only as an ephemeral interaction reply, which the gateway sends
        // at click time; notices for everyone repeat what the edited prompt already shows.
        return {};
      case 'working': {
        const route = Routes.channelMessageOwnReaction(channelId, event.ref, WORKING_REACTION);
        await this.ignoreGone(() => (event.on ? this.rest.put(route) : this.rest.delete(route)));
        return {};
      }
    }
  }

  private async ignoreGone(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (error) {
      if (!(error instanceof DiscordAPIError && typeof error.code === 'number' && GONE.has(error.code)))
        throw error;
    }
  }
}

/**
 * Discord's own deduplication: a post with `enforce_nonce` whose nonce the bot used in the last few minutes
 * returns the earlier message instead of a second one. A retried delivery (its worker died after posting,
 * before Temporal heard of it) therefore posts nothing twice, and the gate's prompt keeps its one message id.
 * A nonce is at most 25 characters: a digest of the delivery's key and the part.
 */
function onlyOnce(key: string | undefined, part: number): { nonce?: string; enforce_nonce?: true } {
  if (!key) return {};
  const nonce = createHash('sha256').update(`${key}#${part}`).digest('base64url').slice(0, 25);
  return { nonce, enforce_nonce: true };
}

/** A streamed message while it is written: its text so far (within one message) and a sign that more follows. */
function writing(text: string): string {
  return `${splitForDiscord(discordMentions(text))[0] ?? ''} …`.slice(0, 2_000);
}

/**
 * Slack outbound: carries a session's outbound events to the Web API (post, update, ephemeral, reactions).
 * Runs inside the worker's `deliver` activity. The WebClient honours 429 retry-after on its own.
 */
import type { KnownBlock } from '@slack/types';
import { WebClient } from '@slack/web-api';
import {
  FROM_FIRST_PART,
  type DeliveryResult,
  type OutboundEvent,
  type PartProgress,
} from '../../workflows/session/outbound';
import { parseSlackSessionId } from './ids';
import {
  decidedBlocks,
  gateBlocks,
  slackMentions,
  splitForSlack,
  toMrkdwn,
  workingBlocks,
  WORKING_STATUS,
  answerWithFeedbackBlocks,
} from './render';

const WORKING_REACTION = 'hourglass_flowing_sand';

export class SlackOutbound {
  private readonly client: WebClient;
  private readonly assistant: boolean;

  constructor(options: { botToken: string; apiUrl: string | undefined; assistant?: boolean }) {
    this.assistant = options.assistant ?? false;
    this.client = new WebClient(options.botToken, {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      retryConfig: { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 5_000 },
    });
  }

  private threadOf(sessionId: string) {
    const thread = parseSlackSessionId(sessionId);
    if (!thread) throw new Error(`${sessionId} is not a Slack session id`);
    return thread;
  }

  /** Streamed answers: the text so far, posted in the thread, marked as still being written. */
  async streamPost(sessionId: string, text: string): Promise<string> {
    const thread = this.threadOf(sessionId);
    const posted = await this.client.chat.postMessage({
      channel: thread.channel,
      thread_ts: thread.threadTs,
      text: writing(text),
      mrkdwn: true,
      unfurl_links: false,
    });
    if (!posted.ts) throw new Error('Slack returned no ts for the streamed message');
    return posted.ts;
  }

  /** chat.update is Tier 3 (about 50 a minute per workspace): a streamed message is edited every 3 s. */
  readonly streamEditEveryMs = 3_000;
  readonly streamChars = 2_900;

  async streamEdit(sessionId: string, ref: string, text: string, final = false): Promise<void> {
    await this.client.chat.update({
      channel: this.threadOf(sessionId).channel,
      ts: ref,
      text: final ? text : writing(text),
    });
  }

  /** Edits a streamed message into its final form; false when it is gone (the answer is then posted anew). */
  private async replace(channel: string, ts: string, body: { text: string; blocks?: KnownBlock[] }) {
    try {
      await this.client.chat.update({ channel, ts, ...body });
      return true;
    } catch (error) {
      if ((error as { data?: { error?: string } }).data?.error === 'message_not_found') return false;
      throw error;
    }
  }

  async deliver(
    sessionId: string,
    event: OutboundEvent,
    progress: PartProgress = FROM_FIRST_PART,
  ): Promise<DeliveryResult> {
    const thread = this.threadOf(sessionId);
    const where = { channel: thread.channel, thread_ts: thread.threadTs };
    switch (event.type) {
      case 'message': {
        const parts = splitForSlack(slackMentions(toMrkdwn(event.text)));
        // In an assistant thread a final answer ends with feedback buttons (recorded on the message).
        const rated = this.assistant && event.answer && event.id && thread.channel.startsWith('D');
        for (let part = progress.from; part < parts.length; part++) {
          const last = part === parts.length - 1;
          const body = {
            text: parts[part]!,
            ...(rated && last ? { blocks: answerWithFeedbackBlocks(parts[part]!, event.id!) } : {}),
          };
          // The answer was streamed into a message while written: its first part takes that message's place.
          if (part === 0 && event.replaces && (await this.replace(thread.channel, event.replaces, body)))
            progress.onPosted(1);
          else {
            await this.client.chat.postMessage({ ...where, ...body, mrkdwn: true, unfurl_links: false });
            progress.onPosted(part + 1);
          }
        }
        return {};
      }
      case 'gate': {
        const posted = await this.client.chat.postMessage({
          ...where,
          text:
            event.gate.kind === 'approval' ? `Approval needed: ${event.gate.toolName}` : 'A question for you',
          blocks: gateBlocks(event.gate, sessionId, event.reason),
        });
        return posted.ts ? { ref: posted.ts } : {};
      }
      case 'gate_updated': {
        for (const ts of event.gate.posts ?? [])
          await this.client.chat.update({
            channel: thread.channel,
            ts,
            text: `Approval needed: ${event.gate.toolName}`,
            blocks: gateBlocks(event.gate, sessionId, 'opened'),
          });
        return {};
      }
      case 'gate_resolved': {
        for (const ts of event.gate.posts ?? []) {
          await this.client.chat.update({
            channel: thread.channel,
            ts,
            text: slackMentions(event.outcome),
            blocks: decidedBlocks(event.gate, event.outcome),
          });
        }
        return {};
      }
      case 'notice': {
        // Notices for everyone repeat what the edited prompt already shows; only personal ones are sent.
        if (event.to)
          await this.client.chat.postEphemeral({ ...where, user: event.to, text: slackMentions(event.text) });
        return {};
      }
      case 'working': {
        const reaction = { channel: thread.channel, timestamp: event.ref, name: WORKING_REACTION };
        try {
          if (event.on) await this.client.reactions.add(reaction);
          else await this.client.reactions.remove(reaction);
        } catch (error) {
          const code = (error as { data?: { error?: string } }).data?.error;
          if (code !== 'already_reacted' && code !== 'no_reaction' && code !== 'message_not_found')
            throw error;
        }
        // An assistant thread (a DM thread of an AI app) shows "is working…" under the thread while the turn runs.
        if (this.assistant && thread.channel.startsWith('D') && thread.threadTs !== event.ref)
          await this.client.assistant.threads
            .setStatus({
              channel_id: thread.channel,
              thread_ts: thread.threadTs,
              status: event.on ? WORKING_STATUS : '',
            })
            .catch(() => {}); // cosmetic: the reaction says the same
        // The requester alone sees a Stop button while the turn runs (an ephemeral note, gone on reload).
        if (event.on && event.to && progress.from === 0) {
          await this.client.chat.postEphemeral({
            ...where,
            user: event.to,
            text: 'Working on it. To stop this turn, type `stop` here.',
            blocks: workingBlocks(sessionId),
          });
          progress.onPosted(1);
        }
        return {};
      }
    }
  }
}

/** A streamed message while it is written: its text so far (within one message) and a sign that more follows. */
function writing(text: string): string {
  return `${splitForSlack(slackMentions(toMrkdwn(text)))[0] ?? ''} …`;
}

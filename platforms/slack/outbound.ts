/**
 * Slack outbound: carries a session's outbound events to the Web API (post, update, ephemeral, reactions).
 * Runs inside the worker's `deliver` activity. The WebClient honours 429 retry-after on its own.
 */
import type { KnownBlock } from '@slack/types';
import { WebClient } from '@slack/web-api';
import type { StreamContext } from '../../common/stream-context';
import {
  FROM_FIRST_PART,
  type DeliveryResult,
  type OutboundEvent,
  type PartProgress,
} from '../../workflows/session/outbound';
import { parseSlackSessionId } from './ids';
import {
  NATIVE_STREAM_CHARS,
  NATIVE_STREAM_PREFIX,
  NativeStreams,
  slackErrorCode,
  streamTs,
} from './native-stream';
import {
  decidedBlocks,
  gateBlocks,
  slackMentions,
  splitForSlack,
  toMrkdwn,
  workingBlocks,
  WORKING_STATUS,
  answerWithFeedbackBlocks,
  feedbackBlock,
} from './render';

const WORKING_REACTION = 'hourglass_flowing_sand';

export class SlackOutbound {
  private readonly client: WebClient;
  private readonly assistant: boolean;
  /** Slack's own streaming messages; an AI app's answers use them where the workspace allows (`native`). */
  private readonly streams: NativeStreams;
  private readonly native: NativeStreams | undefined;
  /** Whether Slack may fetch the links of an agent's message to preview them. */
  private readonly unfurl: { unfurl_links: boolean; unfurl_media: boolean };

  constructor(options: {
    botToken: string;
    apiUrl: string | undefined;
    assistant?: boolean;
    /** The policy's `linkPreviews.slack`: off unless turned on (see infra/config.ts). */
    linkPreviews?: boolean;
    warn?: (message: string, fields: Record<string, unknown>) => void;
  }) {
    this.assistant = options.assistant ?? false;
    const on = options.linkPreviews ?? false;
    this.unfurl = { unfurl_links: on, unfurl_media: on };
    this.client = new WebClient(options.botToken, {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      retryConfig: { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 5_000 },
    });
    this.streams = new NativeStreams(options, options.warn ?? (() => {}));
    this.native = this.assistant ? this.streams : undefined;
  }

  private threadOf(sessionId: string) {
    const thread = parseSlackSessionId(sessionId);
    if (!thread) throw new Error(`${sessionId} is not a Slack session id`);
    return thread;
  }

  /**
   * Streamed answers: a streaming message where the workspace has them (with the turn's steps as a plan), else
   * the text so far posted in the thread, marked as still being written.
   */
  async streamPost(sessionId: string, text: string, context: StreamContext, owner: string): Promise<string> {
    const thread = this.threadOf(sessionId);
    const streamed = await this.native?.start(thread, text, context, owner);
    if (streamed) return streamed;
    const posted = await this.client.chat.postMessage({
      channel: thread.channel,
      thread_ts: thread.threadTs,
      text: writing(text),
      mrkdwn: true,
      ...this.unfurl,
    });
    if (!posted.ts) throw new Error('Slack returned no ts for the streamed message');
    return posted.ts;
  }

  /**
   * chat.update is Tier 3 (about 50 a minute per workspace): an edited message changes every 3 s. A streaming
   * message takes chat.appendStream (Tier 4) every second.
   */
  streamEditEveryMs(ref: string | undefined): number {
    const streaming = ref === undefined ? this.native !== undefined : this.streams.isOpen(ref);
    return streaming ? 1_000 : 3_000;
  }

  get streamChars(): number {
    return this.native ? NATIVE_STREAM_CHARS : 2_900;
  }

  async streamEdit(
    sessionId: string,
    ref: string,
    text: string,
    { final, owner }: { final: boolean; owner: string },
  ): Promise<void> {
    const channel = this.threadOf(sessionId).channel;
    // Taken over by a newer attempt (this one was given up while still running): its text is not this one's.
    if (this.streams.lostBy(ref, owner)) return;
    if (await this.streams.append(ref, text, owner, final ? 'stop' : 'more')) return;
    // Another attempt's stream (its worker died), or text that no longer continues it: stopped, then edited.
    await this.streams.close(channel, ref);
    await this.client.chat.update({ channel, ts: streamTs(ref) ?? ref, text: final ? text : writing(text) });
  }

  /** This attempt was given up: its own stream is closed as it is (a newer attempt edits it). */
  async streamAbandon(_sessionId: string, ref: string, owner: string): Promise<void> {
    await this.streams.abandon(ref, owner);
  }

  /**
   * The answer is complete: this attempt's stream that can hold all of it gets the rest, and the final message
   * only closes it (`stream:<ts>`); any other streamed message is replaced by the final message (its ts).
   */
  async streamDone(sessionId: string, ref: string, text: string, owner: string): Promise<string> {
    const ts = streamTs(ref);
    if (ts === undefined) return ref;
    if (this.streams.lostBy(ref, owner)) return ts;
    if (await this.streams.append(ref, text, owner, 'whole').catch(() => false)) return ref;
    await this.streams.close(this.threadOf(sessionId).channel, ref);
    return ts;
  }

  /** Edits a streamed message into its final form; false when it is gone (the answer is then posted anew). */
  private async replace(channel: string, ts: string, body: { text: string; blocks?: KnownBlock[] }) {
    try {
      await this.client.chat.update({ channel, ts, ...body });
      return true;
    } catch (error) {
      const code = slackErrorCode(error);
      if (code === 'message_not_found') return false;
      // Still a live stream (its attempt could not close it): closed now, so the retried delivery edits it.
      if (code === 'cant_update_message')
        await this.streams.close(channel, `${NATIVE_STREAM_PREFIX}${ts}`, true);
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
        const streamed = event.replaces === undefined ? undefined : streamTs(event.replaces);
        for (let part = progress.from; part < parts.length; part++) {
          const last = part === parts.length - 1;
          const body = {
            text: parts[part]!,
            ...(rated && last ? { blocks: answerWithFeedbackBlocks(parts[part]!, event.id!) } : {}),
          };
          // A streaming message holds the whole answer: closing it (with the feedback buttons) delivers it; if
          // it is gone (deleted while written), the answer is posted anew.
          const closing = part === 0 && streamed !== undefined;
          if (
            closing &&
            (await this.streams.finish(
              thread.channel,
              streamed!,
              rated ? [feedbackBlock(event.id!)] : undefined,
            ))
          ) {
            progress.onPosted(parts.length);
            break;
          }
          // The answer was streamed into a message while written: its first part takes that message's place.
          if (
            !closing &&
            part === 0 &&
            event.replaces &&
            (await this.replace(thread.channel, event.replaces, body))
          )
            progress.onPosted(1);
          else {
            await this.client.chat.postMessage({ ...where, ...body, mrkdwn: true, ...this.unfurl });
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

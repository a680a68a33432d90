/**
 * Slack outbound: carries a session's outbound events to the Web API (post, update, ephemeral, reactions).
 * Runs inside the worker's `deliver` activity. The WebClient honours 429 retry-after on its own.
 */
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

  async deliver(
    sessionId: string,
    event: OutboundEvent,
    progress: PartProgress = FROM_FIRST_PART,
  ): Promise<DeliveryResult> {
    const thread = parseSlackSessionId(sessionId);
    if (!thread) throw new Error(`${sessionId} is not a Slack session id`);
    const where = { channel: thread.channel, thread_ts: thread.threadTs };
    switch (event.type) {
      case 'message': {
        const parts = splitForSlack(slackMentions(toMrkdwn(event.text)));
        // In an assistant thread a final answer ends with feedback buttons (recorded on the message).
        const rated = this.assistant && event.answer && event.id && thread.channel.startsWith('D');
        for (let part = progress.from; part < parts.length; part++) {
          const last = part === parts.length - 1;
          await this.client.chat.postMessage({
            ...where,
            text: parts[part]!,
            mrkdwn: true,
            unfurl_links: false,
            ...(rated && last ? { blocks: answerWithFeedbackBlocks(parts[part]!, event.id!) } : {}),
          });
          progress.onPosted(part + 1);
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

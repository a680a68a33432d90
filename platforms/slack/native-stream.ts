/**
 * Slack's own streaming messages (chat.startStream / appendStream / stopStream) for an app set up as an AI app
 * (`SLACK_ASSISTANT=on`): the answer is appended as it is written, with the turn's tool steps shown as a plan
 * above it. A workspace that refuses chat.startStream (the app lacks the AI-app feature, an older plan) gets
 * the edited message instead (outbound.ts), and is asked again only after a while.
 *
 * A stream lives in one activity attempt: this process remembers what it appended to each of its streams. A
 * stream some other attempt left open (its worker died) is stopped here and then edited like a plain message.
 */
import type { AnyChunk, KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import type { StreamContext } from '../../common/stream-context';
import type { SlackThread } from './ids';

/** The reference the final message gets when the stream holds the whole answer: only the stream is closed. */
export const NATIVE_STREAM_PREFIX = 'stream:';
/** Slack's limit on one markdown_text; an answer longer than this is replaced by the final message instead. */
export const NATIVE_STREAM_CHARS = 12_000;
/** How long a workspace that refused streaming is not asked again, in ms. */
const REFUSED_FOR_MS = 10 * 60_000;

type Warn = (message: string, fields: Record<string, unknown>) => void;

export function slackErrorCode(error: unknown): string | undefined {
  return (error as { data?: { error?: string } }).data?.error;
}

export class NativeStreams {
  /** This process's open streams by ts: their channel and the text appended so far. */
  private readonly open = new Map<string, { channel: string; sent: string }>();
  /** Streams of other attempts already stopped here (each is stopped once). */
  private readonly adopted = new Set<string>();
  private readonly refusedUntil = new Map<string, number>();

  constructor(
    private readonly client: WebClient,
    private readonly warn: Warn,
  ) {}

  has(ts: string): boolean {
    return this.open.has(ts);
  }

  /** Starts a stream with the text so far; undefined when this workspace does not stream (then edit instead). */
  async start(thread: SlackThread, text: string, context: StreamContext): Promise<string | undefined> {
    if ((this.refusedUntil.get(thread.team) ?? 0) > Date.now()) return undefined;
    // In a channel a stream is addressed to one person; in a DM the other side is that person.
    const recipient =
      context.requester && !thread.channel.startsWith('D')
        ? { recipient_user_id: context.requester, recipient_team_id: thread.team }
        : {};
    const steps: AnyChunk[] = context.steps.length
      ? [
          {
            type: 'plan_update',
            title: `${context.steps.length} step${context.steps.length > 1 ? 's' : ''}`,
          },
          ...context.steps.map((step) => ({ type: 'task_update' as const, ...step })),
        ]
      : [];
    try {
      const started = await this.client.chat.startStream({
        channel: thread.channel,
        thread_ts: thread.threadTs,
        ...recipient,
        ...(steps.length
          ? { task_display_mode: 'plan', chunks: [...steps, { type: 'markdown_text', text }] }
          : { markdown_text: text }),
      });
      if (!started.ts) throw new Error('Slack returned no ts for the stream');
      this.open.set(started.ts, { channel: thread.channel, sent: text });
      return started.ts;
    } catch (error) {
      const code = slackErrorCode(error);
      if (!code) throw error; // unreachable or rate limited: the next update tries again
      this.refusedUntil.set(thread.team, Date.now() + REFUSED_FOR_MS);
      this.warn(
        'Slack refused a streaming message, so answers in this workspace are streamed by editing a message (chat.update); give the app the Agents & AI Apps feature for Slack’s own streaming',
        { team: thread.team, error: code },
      );
      return undefined;
    }
  }

  /**
   * Appends what `text` adds to the stream (and closes it when `stop`); false when `text` does not continue
   * what the stream shows, or is too long for it: the caller then edits the message instead.
   */
  async append(ts: string, text: string, stop = false): Promise<boolean> {
    const stream = this.open.get(ts);
    if (!stream || !text.startsWith(stream.sent) || text.length > NATIVE_STREAM_CHARS) return false;
    const delta = text.slice(stream.sent.length);
    if (stop) {
      this.open.delete(ts);
      await this.client.chat.stopStream({
        channel: stream.channel,
        ts,
        ...(delta ? { markdown_text: delta } : {}),
      });
    } else if (delta) {
      await this.client.chat.appendStream({ channel: stream.channel, ts, markdown_text: delta });
      stream.sent = text;
    }
    return true;
  }

  /** Stops a stream as it is (best effort): the message can then be edited like any other. */
  async close(channel: string, ts: string): Promise<void> {
    const mine = this.open.delete(ts);
    if (!mine && this.adopted.has(ts)) return;
    this.adopted.add(ts);
    await this.client.chat.stopStream({ channel, ts }).catch(() => {}); // not a stream, or already stopped
  }

  /**
   * The final message of an answer the stream holds in full: the stream is closed, with `blocks` (feedback
   * buttons) under it. False when the message is gone (the answer is then posted anew).
   */
  async finish(channel: string, ts: string, blocks: KnownBlock[] | undefined): Promise<boolean> {
    this.open.delete(ts);
    try {
      await this.client.chat.stopStream({ channel, ts, ...(blocks ? { blocks } : {}) });
      return true;
    } catch (error) {
      const code = slackErrorCode(error);
      // Stopped already: an earlier attempt of this delivery closed it, and the answer is there.
      if (code === 'message_not_in_streaming_state') return true;
      if (code === 'message_not_found') return false;
      throw error;
    }
  }
}

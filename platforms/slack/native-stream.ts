/**
 * Slack's own streaming messages (chat.startStream / appendStream / stopStream) for an app set up as an AI app
 * (`SLACK_ASSISTANT=on`): the answer is appended as it is written, with the turn's tool steps shown as a plan
 * above it. A workspace that refuses chat.startStream (the app lacks the AI-app feature, an older plan) gets
 * the edited message instead (outbound.ts), and is asked again only after a while.
 *
 * A stream belongs to the activity attempt that started it (`owner`): only it appends. A stream some other
 * attempt left open (its worker died, or it was given up while still running) is stopped and then edited like a
 * plain message. Stream calls are never resent by the client: a resent start or append would duplicate text.
 */
import type { AnyChunk, KnownBlock } from '@slack/types';
import { WebClient } from '@slack/web-api';
import type { StreamContext } from '../../common/stream-context';
import type { SlackThread } from './ids';
import { slackMentions } from './render';

/** A reference to a streaming message (`stream:<ts>`), as opposed to a plain message's ts. */
export const NATIVE_STREAM_PREFIX = 'stream:';
/** Slack's limit on one markdown_text; an answer longer than this is replaced by the final message instead. */
export const NATIVE_STREAM_CHARS = 12_000;
/** How long a workspace that refused streaming is not asked again, in ms. */
const REFUSED_FOR_MS = 10 * 60_000;
/** A stream nobody closed by then (its final message was delivered by another worker) is forgotten here. */
const FORGET_AFTER_MS = 30 * 60_000;
/** Refusals that say the app or workspace cannot stream at all (others concern one message). */
const FEATURE_REFUSALS = new Set([
  'unknown_method',
  'not_allowed_token_type',
  'missing_scope',
  'feature_not_enabled',
  'not_allowed',
  'no_permission',
  'access_denied',
  'team_access_not_granted',
  'restricted_action',
]);
const SLACK_USER_ID = /^[UW][A-Z0-9]+$/;

type Warn = (message: string, fields: Record<string, unknown>) => void;

export function slackErrorCode(error: unknown): string | undefined {
  return (error as { data?: { error?: string } }).data?.error;
}

export const streamTs = (ref: string): string | undefined =>
  ref.startsWith(NATIVE_STREAM_PREFIX) ? ref.slice(NATIVE_STREAM_PREFIX.length) : undefined;

interface OpenStream {
  channel: string;
  owner: string;
  /** The text the stream shows (mentions as Slack writes them). */
  sent: string;
  at: number;
}

export class NativeStreams {
  /** A client that never resends: Slack may have acted on a call whose answer was lost. */
  private readonly client: WebClient;
  private readonly open = new Map<string, OpenStream>();
  /** Streams of other attempts already stopped here (each is stopped once), with when. */
  private readonly closed = new Map<string, number>();
  private readonly refusedUntil = new Map<string, number>();
  /** Streams another attempt took over (Slack said they no longer stream), by ts: their old owner. */
  private readonly lost = new Map<string, { owner: string; at: number }>();

  constructor(
    options: { botToken: string; apiUrl: string | undefined },
    private readonly warn: Warn,
  ) {
    this.client = new WebClient(options.botToken, {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      retryConfig: { retries: 0 },
    });
  }

  /** True when `owner`'s stream `ref` was taken over by another attempt: `owner` leaves the message alone. */
  lostBy(ref: string, owner: string): boolean {
    const ts = streamTs(ref);
    return ts !== undefined && this.lost.get(ts)?.owner === owner;
  }

  /** True when `ref` is a stream this process is writing. */
  isOpen(ref: string): boolean {
    const ts = streamTs(ref);
    return ts !== undefined && this.open.has(ts);
  }

  /**
   * Starts a stream with the text so far: its reference (`stream:<ts>`), or undefined when this message is not
   * streamed (the workspace refuses, or nobody to address it to): the caller then posts and edits instead.
   */
  async start(
    thread: SlackThread,
    text: string,
    context: StreamContext,
    owner: string,
  ): Promise<string | undefined> {
    this.forgetOld();
    if ((this.refusedUntil.get(thread.team) ?? 0) > Date.now()) return undefined;
    // In a channel a stream is addressed to one person (as Slack requires); in a DM the other side is that person.
    const inDm = thread.channel.startsWith('D');
    const requester =
      context.requester && SLACK_USER_ID.test(context.requester) ? context.requester : undefined;
    if (!inDm && !requester) return undefined;
    const recipient = inDm ? {} : { recipient_user_id: requester!, recipient_team_id: thread.team };
    const steps: AnyChunk[] = context.steps.length
      ? [
          {
            type: 'plan_update',
            title: `${context.steps.length} step${context.steps.length > 1 ? 's' : ''}`,
          },
          ...context.steps.map((step) => ({ type: 'task_update' as const, ...step })),
        ]
      : [];
    const shown = settled(text) || slackMentions(text);
    try {
      const started = await this.client.chat.startStream({
        channel: thread.channel,
        thread_ts: thread.threadTs,
        ...recipient,
        ...(steps.length
          ? { task_display_mode: 'plan', chunks: [...steps, { type: 'markdown_text', text: shown }] }
          : { markdown_text: shown }),
      });
      if (!started.ts) throw new Error('Slack returned no ts for the stream');
      this.open.set(started.ts, { channel: thread.channel, owner, sent: shown, at: Date.now() });
      return `${NATIVE_STREAM_PREFIX}${started.ts}`;
    } catch (error) {
      const code = slackErrorCode(error);
      if (!code) throw error; // unreachable or rate limited: the next update tries again
      if (FEATURE_REFUSALS.has(code)) {
        this.refusedUntil.set(thread.team, Date.now() + REFUSED_FOR_MS);
        this.warn(
          'Slack refused a streaming message, so answers in this workspace are streamed by editing a message (chat.update) for the next ten minutes; give the app the Agents & AI Apps feature for Slack’s own streaming',
          { team: thread.team, error: code },
        );
      } else this.warn('Slack refused a streaming message; this answer is edited instead', { error: code });
      return undefined;
    }
  }

  /**
   * Appends what `text` adds to `owner`'s stream: `more` follows (a word half written waits), this is the
   * `whole` answer, or `stop` here (closing the stream). False when the stream is not
   * `owner`'s, `text` does not continue what it shows, or it would be too long: the caller then closes it and
   * edits the message instead. A failed append gives the stream up the same way (its text is then uncertain).
   */
  async append(
    ref: string,
    text: string,
    owner: string,
    mode: 'more' | 'whole' | 'stop' = 'more',
  ): Promise<boolean> {
    const ts = streamTs(ref);
    const stream = ts === undefined ? undefined : this.open.get(ts);
    if (!stream || stream.owner !== owner) return false;
    const stop = mode === 'stop';
    const next = mode === 'more' ? settled(text) : slackMentions(text);
    // Nothing settled beyond what is shown (a first text without a space): wait for more.
    if (mode === 'more' && next.length <= stream.sent.length && slackMentions(text).startsWith(stream.sent))
      return true;
    if (!next.startsWith(stream.sent) || next.length > NATIVE_STREAM_CHARS) return false;
    const delta = next.slice(stream.sent.length);
    if (!delta && !stop) return true;
    try {
      if (stop) {
        this.open.delete(ts!);
        await this.client.chat.stopStream({
          channel: stream.channel,
          ts: ts!,
          ...(delta ? { markdown_text: delta } : {}),
        });
      } else {
        await this.client.chat.appendStream({ channel: stream.channel, ts: ts!, markdown_text: delta });
        stream.sent = next;
      }
      return true;
    } catch (error) {
      this.open.delete(ts!);
      if (slackErrorCode(error) === 'message_not_in_streaming_state')
        this.lost.set(ts!, { owner, at: Date.now() });
      throw error;
    }
  }

  /**
   * Stops a stream as it is (best effort; a plain message's ts is left alone): the message can then be edited
   * like any other. Each stream is stopped once here, unless `again`.
   */
  async close(channel: string, ref: string, again = false): Promise<void> {
    this.forgetOld();
    const ts = streamTs(ref);
    if (ts === undefined) return;
    const mine = this.open.delete(ts);
    if (!mine && !again && this.closed.has(ts)) return;
    this.closed.set(ts, Date.now());
    await this.client.chat.stopStream({ channel, ts }).catch(() => {}); // already stopped, or gone
  }

  /** Stops `owner`'s own stream as it is (its attempt was given up: no newer text is certain to follow). */
  async abandon(ref: string, owner: string): Promise<void> {
    const ts = streamTs(ref);
    const stream = ts === undefined ? undefined : this.open.get(ts);
    if (stream?.owner === owner) await this.close(stream.channel, ref);
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

  private forgetOld(): void {
    const before = Date.now() - FORGET_AFTER_MS;
    for (const [ts, stream] of this.open) if (stream.at < before) this.open.delete(ts);
    for (const [ts, at] of this.closed) if (at < before) this.closed.delete(ts);
    for (const [ts, { at }] of this.lost) if (at < before) this.lost.delete(ts);
  }
}

/**
 * The text a stream may show while more follows: mentions as Slack writes them, up to the last whitespace, so
 * a word (or a mention) half written is not sent in a form the rest of it would change.
 */
function settled(text: string): string {
  const cut = Math.max(text.lastIndexOf(' '), text.lastIndexOf('\n'));
  return slackMentions(cut < 0 ? '' : text.slice(0, cut + 1));
}

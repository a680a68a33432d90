/**
 * Teams outbound: a session's outbound events to the Bot Connector, in the worker's `deliver` activity. Answers are
 * markdown messages. A streamed answer uses Teams' own streaming in a personal chat (typing activities carrying a
 * `streaminfo` entity, closed by the final message with `streamType: final`), the only place Teams offers it; in
 * group chats and channels it is one message edited while written. A gate is an Adaptive Card whose
 * activity id is kept on the gate, so every change (an approval of several, the decision) edits that card in place
 * for everyone. Notices meant for one person are told to them when they click (the invoke's answer), as Teams has
 * no private message in a shared conversation.
 */
import {
  FROM_FIRST_PART,
  type DeliveryResult,
  type OutboundEvent,
  type PartProgress,
} from '../../workflows/session/outbound';
import type { Voice } from '../../common/gates/words';
import type { UsersTable } from '../../common/identities';
import { asAttachment, decidedGateCard, openGateCard, teamsVoice } from './cards';
import { Connector, ConnectorError } from './connector';
import { parseTeamsSessionId, type TeamsConversation } from './ids';

/** Teams takes about 28 KB a message: long answers go in parts. */
const PART_CHARS = 20_000;
const GONE = new Set([404, 410]);
/** A streamed answer's reference when it is a Teams stream (its stream id), not a message to edit. */
const STREAM = 'stream:';

/** Personal (one-to-one) chats have `a:` conversation ids; Teams streams answers only there. */
const streamsNatively = (where: TeamsConversation) => where.conversationId.startsWith('a:');
const streamInfo = (info: {
  streamId?: string;
  streamType: 'streaming' | 'final';
  streamSequence?: number;
}) => [{ type: 'streaminfo', ...info }];

export class TeamsOutbound {
  private readonly connector: Connector;
  readonly streamChars = PART_CHARS;

  private readonly voice: Voice;
  /**
   * The next sequence number of each stream this process started: Teams takes a stream's updates in increasing
   * order. A stream started by an earlier attempt (its worker died) gets no more updates here; its final message
   * still closes it.
   */
  private readonly sequences = new Map<string, number>();

  constructor(options: { appId: string; appPassword: string; tokenUrl: string; users: UsersTable }) {
    this.connector = new Connector(options);
    this.voice = teamsVoice(options.users);
  }

  private where(sessionId: string): TeamsConversation {
    const where = parseTeamsSessionId(sessionId);
    if (!where) throw new Error(`${sessionId} is not a Teams session id`);
    return where;
  }

  /** Teams allows a bot about one edit a second in a conversation. */
  streamEditEveryMs(): number {
    return 1_500;
  }

  async streamPost(sessionId: string, text: string): Promise<string> {
    const where = this.where(sessionId);
    if (streamsNatively(where)) {
      const id = await this.connector.send(where, {
        type: 'typing',
        text: text.slice(0, PART_CHARS),
        entities: streamInfo({ streamType: 'streaming', streamSequence: 1 }),
      });
      if (!id) throw new Error('the Bot Connector gave the stream no id');
      this.sequences.set(id, 2);
      return `${STREAM}${id}`;
    }
    const id = await this.connector.send(where, {
      type: 'message',
      text: `${text.slice(0, PART_CHARS)} …`,
      textFormat: 'markdown',
    });
    if (!id) throw new Error('the Bot Connector gave the streamed message no id');
    return id;
  }

  async streamEdit(
    sessionId: string,
    ref: string,
    text: string,
    { final }: { final: boolean },
  ): Promise<void> {
    const where = this.where(sessionId);
    if (ref.startsWith(STREAM)) {
      const streamId = ref.slice(STREAM.length);
      if (final) {
        // A stopped or failed answer keeps what was written, closed as the stream's last word or posted anew.
        if (!(await this.closeStream(where, streamId, text.slice(0, PART_CHARS))))
          await this.connector.send(where, {
            type: 'message',
            text: text.slice(0, PART_CHARS),
            textFormat: 'markdown',
          });
        return;
      }
      const sequence = this.sequences.get(streamId);
      if (sequence === undefined) return;
      this.sequences.set(streamId, sequence + 1);
      await this.connector.send(where, {
        type: 'typing',
        text: text.slice(0, PART_CHARS),
        entities: streamInfo({ streamId, streamType: 'streaming', streamSequence: sequence }),
      });
      return;
    }
    await this.connector.update(where, ref, {
      type: 'message',
      text: final ? text.slice(0, PART_CHARS) : `${text.slice(0, PART_CHARS)} …`,
      textFormat: 'markdown',
    });
  }

  /**
   * A stream's final message, with the answer as it stays; false when Teams no longer takes it (the stream timed
   * out or was closed), and the answer is then posted as a message of its own.
   */
  private async closeStream(where: TeamsConversation, streamId: string, text: string): Promise<boolean> {
    this.sequences.delete(streamId);
    try {
      await this.connector.send(where, {
        type: 'message',
        text,
        textFormat: 'markdown',
        entities: streamInfo({ streamId, streamType: 'final' }),
      });
      return true;
    } catch (error) {
      if (
        error instanceof ConnectorError &&
        error.status >= 400 &&
        error.status < 500 &&
        error.status !== 401
      )
        return false;
      throw error;
    }
  }

  async deliver(
    sessionId: string,
    event: OutboundEvent,
    progress: PartProgress = FROM_FIRST_PART,
  ): Promise<DeliveryResult> {
    const where = this.where(sessionId);
    switch (event.type) {
      case 'message': {
        const parts = splitText(event.text);
        for (let part = progress.from; part < parts.length; part++) {
          const message = { type: 'message' as const, text: parts[part]!, textFormat: 'markdown' as const };
          // The answer was streamed into a message while written: its first part takes that message's place.
          if (
            part === 0 &&
            event.replaces &&
            (event.replaces.startsWith(STREAM)
              ? await this.closeStream(where, event.replaces.slice(STREAM.length), message.text)
              : await this.ignoreGone(() => this.connector.update(where, event.replaces!, message)))
          ) {
            progress.onPosted(1);
            continue;
          }
          await this.connector.send(where, message);
          progress.onPosted(part + 1);
        }
        return {};
      }
      case 'gate': {
        const id = await this.connector.send(where, {
          type: 'message',
          attachments: [asAttachment(openGateCard(event.gate, undefined, this.voice))],
        });
        return id ? { ref: id } : {};
      }
      case 'gate_updated':
        for (const ref of event.gate.posts ?? [])
          await this.ignoreGone(() =>
            this.connector.update(where, ref, {
              type: 'message',
              attachments: [asAttachment(openGateCard(event.gate, undefined, this.voice))],
            }),
          );
        return {};
      case 'gate_resolved':
        for (const ref of event.gate.posts ?? [])
          await this.ignoreGone(() =>
            this.connector.update(where, ref, {
              type: 'message',
              attachments: [asAttachment(decidedGateCard(event.gate, this.voice))],
            }),
          );
        return {};
      case 'notice':
        if (!event.to)
          await this.connector.send(where, { type: 'message', text: event.text, textFormat: 'markdown' });
        return {};
      case 'working':
        if (event.on) await this.connector.send(where, { type: 'typing' });
        return {};
    }
  }

  /** A message deleted in Teams is left alone: true when the call went through. */
  private async ignoreGone(call: () => Promise<unknown>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (error) {
      if (error instanceof ConnectorError && GONE.has(error.status)) return false;
      throw error;
    }
  }
}

function splitText(text: string): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += PART_CHARS) parts.push(text.slice(at, at + PART_CHARS));
  return parts.length ? parts : [''];
}

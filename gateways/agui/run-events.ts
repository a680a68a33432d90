/**
 * A conversation's changes as AG-UI events, for one run: each new message of the transcript once (an answer as
 * TEXT_MESSAGE_*, its tool calls as TOOL_CALL_*, a tool's result as TOOL_CALL_RESULT), the answer being written as
 * it streams (the same partial text the web page shows), and the conversation's status and open gates as
 * STATE_SNAPSHOT then STATE_DELTA. Pure bookkeeping: the route feeds it views and partials and writes what it returns.
 */
import { EventType, type BaseEvent, type Message } from '@ag-ui/core';
import fastJsonPatch from 'fast-json-patch';
import { gateRule } from '../web/gate-rule';
import type { Message as TranscriptMessage, SessionView } from '../../workflows/session/contract';

/** The state a front end reads: what the conversation does, and what waits on whom. Small and free of secrets. */
export interface ThreadState {
  status: SessionView['status'];
  queued: number;
  gates: { id: string; kind: string; toolName: string; rule: string; expiresAt: string | null }[];
}

export function threadState(view: SessionView): ThreadState {
  return {
    status: view.status,
    queued: view.queued,
    gates: view.gates
      .filter((g) => g.status === 'pending')
      .map((g) => ({
        id: g.id,
        kind: g.kind,
        toolName: g.toolName,
        rule: gateRule(g),
        expiresAt: g.expiresAt ? new Date(g.expiresAt).toISOString() : null,
      })),
  };
}

/** The transcript as AG-UI messages (MESSAGES_SNAPSHOT): people's messages, answers with their calls, results. */
export function transcriptMessages(transcript: readonly TranscriptMessage[]): Message[] {
  return transcript.map((m): Message => {
    if (m.role === 'user') return { id: m.id, role: 'user', content: m.text };
    if (m.role === 'assistant')
      return {
        id: m.id,
        role: 'assistant',
        ...(m.text ? { content: m.text } : {}),
        ...(m.toolCalls.length
          ? {
              toolCalls: m.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: argumentsText(call.args) },
              })),
            }
          : {}),
      };
    return {
      id: m.id,
      role: 'tool',
      toolCallId: m.toolCallId,
      content: m.content,
      ...(m.status === 'ok' ? {} : { error: m.status }),
    };
  });
}

const argumentsText = (args: unknown) => (typeof args === 'string' ? args : JSON.stringify(args ?? {}));

interface OpenStream {
  messageId: string;
  sent: string;
}

export class RunEvents {
  private readonly known: Set<string>;
  private stream: OpenStream | undefined;
  private state: ThreadState | undefined;

  /** `known`: the messages the front end has (everything already in the transcript when the run began). */
  constructor(known: Iterable<string>) {
    this.known = new Set(known);
  }

  /** The events for a new view: new messages (closing a streamed answer under its own id) and the state's change. */
  view(view: SessionView): BaseEvent[] {
    const events: BaseEvent[] = [];
    for (const m of view.transcript) {
      if (this.known.has(m.id)) continue;
      this.known.add(m.id);
      if (m.role === 'user') continue;
      if (m.role === 'tool') {
        events.push({
          type: EventType.TOOL_CALL_RESULT,
          messageId: m.id,
          toolCallId: m.toolCallId,
          content: m.content,
          role: 'tool',
        } as BaseEvent);
        continue;
      }
      events.push(...this.answer(m));
    }
    const next = threadState(view);
    if (!this.state) events.push({ type: EventType.STATE_SNAPSHOT, snapshot: next } as BaseEvent);
    else {
      const delta = fastJsonPatch.compare(this.state, next);
      if (delta.length) events.push({ type: EventType.STATE_DELTA, delta } as BaseEvent);
    }
    this.state = next;
    return events;
  }

  /** The answer being written: started once, then only what was added since. */
  partial(update: { streamId: string; text: string }): BaseEvent[] {
    const events: BaseEvent[] = [];
    if (this.stream && this.stream.messageId !== update.streamId) events.push(...this.closeStream());
    if (!this.stream) {
      this.stream = { messageId: update.streamId, sent: '' };
      events.push({
        type: EventType.TEXT_MESSAGE_START,
        messageId: update.streamId,
        role: 'assistant',
      } as BaseEvent);
    }
    const stream = this.stream;
    if (update.text.startsWith(stream.sent) && update.text.length > stream.sent.length) {
      events.push({
        type: EventType.TEXT_MESSAGE_CONTENT,
        messageId: stream.messageId,
        delta: update.text.slice(stream.sent.length),
      } as BaseEvent);
      stream.sent = update.text;
    }
    return events;
  }

  /** Before the run ends: a streamed answer whose message never came is closed, so every START has its END. */
  finish(): BaseEvent[] {
    return this.closeStream();
  }

  private closeStream(): BaseEvent[] {
    const stream = this.stream;
    this.stream = undefined;
    return stream ? [{ type: EventType.TEXT_MESSAGE_END, messageId: stream.messageId } as BaseEvent] : [];
  }

  private answer(m: Extract<TranscriptMessage, { role: 'assistant' }>): BaseEvent[] {
    const events: BaseEvent[] = [];
    // The answer streamed so far becomes this message: the rest of its text, then its end, under the streamed id.
    const stream = this.stream;
    if (stream && m.text.startsWith(stream.sent)) {
      if (m.text.length > stream.sent.length)
        events.push({
          type: EventType.TEXT_MESSAGE_CONTENT,
          messageId: stream.messageId,
          delta: m.text.slice(stream.sent.length),
        } as BaseEvent);
      events.push(...this.closeStream());
    } else {
      events.push(...this.closeStream());
      if (m.text)
        events.push(
          { type: EventType.TEXT_MESSAGE_START, messageId: m.id, role: 'assistant' } as BaseEvent,
          { type: EventType.TEXT_MESSAGE_CONTENT, messageId: m.id, delta: m.text } as BaseEvent,
          { type: EventType.TEXT_MESSAGE_END, messageId: m.id } as BaseEvent,
        );
    }
    for (const call of m.toolCalls)
      events.push(
        {
          type: EventType.TOOL_CALL_START,
          toolCallId: call.id,
          toolCallName: call.name,
          parentMessageId: stream && m.text.startsWith(stream.sent) ? stream.messageId : m.id,
        } as BaseEvent,
        { type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: argumentsText(call.args) } as BaseEvent,
        { type: EventType.TOOL_CALL_END, toolCallId: call.id } as BaseEvent,
      );
    return events;
  }
}

/**
 * What one turn adds to a conversation's history, early and late in the conversation: events and bytes of the
 * turn at turn `early` and turn `late` of one conversation (each turn: a message, two model calls and a tool run).
 * The goal (issue 36): the late turn costs at most 1.5× the early one, so history does not grow with the length
 * of the conversation.
 */
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { TestSession } from '../test/helpers/session';

export interface TurnCost {
  turn: number;
  events: number;
  bytes: number;
}

export interface HistoryGrowth {
  early: TurnCost;
  late: TurnCost;
  /** late.bytes / early.bytes */
  ratio: number;
}

async function historyOf(client: Client, workflowId: string): Promise<{ events: number; bytes: number }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  let bytes = 0;
  for (const event of events)
    bytes += temporal.api.history.v1.HistoryEvent.encode(
      temporal.api.history.v1.HistoryEvent.fromObject(event),
    ).finish().length;
  return { events: events.length, bytes };
}

export async function measureHistoryGrowth(
  client: Client,
  taskQueue: string,
  early: number,
  late: number,
): Promise<HistoryGrowth> {
  const session = new TestSession(client, taskQueue);
  session.pollMs = 10;
  const costs = new Map<number, TurnCost>();
  for (let turn = 1; turn <= late; turn++) {
    const before = turn === early || turn === late ? await historyOf(client, session.workflowId) : undefined;
    await session.say(`what time is it, turn ${turn}`);
    await session.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === turn,
      `turn ${turn}`,
    );
    if (before) {
      const after = await historyOf(client, session.workflowId);
      costs.set(turn, { turn, events: after.events - before.events, bytes: after.bytes - before.bytes });
    }
  }
  const e = costs.get(early)!;
  const l = costs.get(late)!;
  return { early: e, late: l, ratio: Number((l.bytes / e.bytes).toFixed(2)) };
}

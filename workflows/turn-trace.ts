/**
 * A turn as one trace. The workflow's own steps are not traced (workers/workflow-code.ts says why), but while a turn
 * runs, every activity it schedules carries the turn's trace context in its headers: the SDK's OpenTelemetry activity
 * interceptor then makes each activity span a child of the turn's `invoke_agent` span, so the model calls, tool
 * runs and waits on people of one turn are one trace, across continue-as-new (the key is carried with the turn) and
 * across days. The ids are made from the workflow id and the turn's key (SHA-256, no randomness, replay-safe); the
 * `invoke_agent` span itself is exported by the activity that ends the turn (activities/genai-spans.ts).
 *
 * The interceptor only adds headers, synchronously: no await, no command, so histories replay unchanged.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import {
  defaultPayloadConverter,
  type ActivityInput,
  type LocalActivityInput,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { TRACE_HEADER, TURN_HEADER, type TurnHeader } from '../common/turn-trace';

export interface TurnTrace {
  /** Unique within the conversation: when the turn started, and for whom. */
  key: string;
  startedAt: number;
}

let current: { trace: string; turn: TurnHeader } | undefined;

/** The turn's trace and root span ids, the same wherever they are computed. */
export function turnTraceIds(workflowId: string, key: string): { traceId: string; spanId: string } {
  const hex = bytesToHex(sha256(utf8ToBytes(`${workflowId}/${key}`)));
  return { traceId: hex.slice(0, 32), spanId: hex.slice(32, 48) };
}

/** From now on, activities scheduled belong to this turn. */
export function enterTurn(workflowId: string, trace: TurnTrace): void {
  const { traceId, spanId } = turnTraceIds(workflowId, trace.key);
  current = {
    trace: `00-${traceId}-${spanId}-01`,
    turn: { traceId, spanId, startedAt: trace.startedAt, workflowId },
  };
}

export function leaveTurn(): void {
  current = undefined;
}

function withTurn<T extends ActivityInput | LocalActivityInput>(input: T): T {
  if (!current) return input;
  return {
    ...input,
    headers: {
      ...input.headers,
      [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent: current.trace }),
      [TURN_HEADER]: defaultPayloadConverter.toPayload(current.turn),
    },
  };
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity: (input, next) => next(withTurn(input)),
      scheduleLocalActivity: (input, next) => next(withTurn(input)),
    },
  ],
});

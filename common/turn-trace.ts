/** The headers that carry a turn's trace into its activities (workflows/turn-trace.ts, activities/genai-spans.ts). */
/** The SDK's OpenTelemetry interceptors read a W3C `traceparent` from this header. */
export const TRACE_HEADER = '_tracer-data';
/** Ours: the turn's ids and start, for the activity that ends the turn to export its `invoke_agent` span. */
export const TURN_HEADER = 'agent-turn';

export interface TurnHeader {
  traceId: string;
  spanId: string;
  startedAt: number;
  workflowId: string;
}

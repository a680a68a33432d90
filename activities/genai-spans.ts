/**
 * OpenTelemetry GenAI spans (the semantic conventions' `chat`, `execute_tool`, and a `gate_wait` span of our own for
 * each wait on a person), made inside the activities as children of the SDK's activity span. Without tracing
 * (no OTLP endpoint) the global tracer is the API's no-op one and this costs nothing. No payloads: no message text,
 * no prompt, no tool arguments or results, no secrets; ids, names, counts and durations only.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from '@opentelemetry/semantic-conventions/incubating';
import type { AuditRecord } from '../common/audit';
import { currentTurn, forcedSpanIds } from '../infra/telemetry';
import type { ModelReply } from './types';

const tracer = () => trace.getTracer('durable-agent');
const splitModel = (model: string) => {
  const at = model.indexOf(':');
  return at < 0
    ? { provider: undefined, name: model }
    : { provider: model.slice(0, at), name: model.slice(at + 1) };
};

async function inSpan<T>(span: Span, work: () => Promise<T>, end: (result: T) => void): Promise<T> {
  try {
    const result = await work();
    end(result);
    return result;
  } catch (error) {
    span.setAttribute(ATTR_ERROR_TYPE, (error as Error).name || 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/** A model call: `chat <model>`, with the model asked for, the one that answered (a fallback), and the tokens. */
export async function chatSpan(
  request: { model: string; conversationId: string },
  call: () => Promise<ModelReply>,
): Promise<ModelReply> {
  const asked = splitModel(request.model);
  return await tracer().startActiveSpan(
    `chat ${asked.name}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
        [ATTR_GEN_AI_REQUEST_MODEL]: asked.name,
        [ATTR_GEN_AI_CONVERSATION_ID]: request.conversationId,
        ...(asked.provider ? { [ATTR_GEN_AI_PROVIDER_NAME]: asked.provider } : {}),
      },
    },
    (span) =>
      inSpan(span, call, (reply) => {
        // No tool calls: this answer ends the turn, whose span can be made now (workflows/turn-trace.ts).
        if (!reply.toolCalls.length) endTurnSpan(request.conversationId);
        const answered = splitModel(reply.model ?? request.model);
        span.setAttribute(ATTR_GEN_AI_RESPONSE_MODEL, answered.name);
        if (answered.provider) span.setAttribute(ATTR_GEN_AI_PROVIDER_NAME, answered.provider);
        span.setAttribute('agent.model.fallback', (reply.model ?? request.model) !== request.model);
        if (reply.usage) {
          span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, reply.usage.inputTokens);
          span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, reply.usage.outputTokens);
          if (reply.usage.cachedInputTokens)
            span.setAttribute(ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, reply.usage.cachedInputTokens);
        }
        span.setAttribute('agent.model.tool_calls', reply.toolCalls.length);
      }),
  );
}

/** A tool run: `execute_tool <tool>`, with the call's id and its outcome (ok, error, denied, …). */
export async function toolSpan<T extends { status: string }>(
  request: { toolName: string; callId: string; conversationId: string },
  run: () => Promise<T>,
): Promise<T> {
  return await tracer().startActiveSpan(
    `execute_tool ${request.toolName}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
        [ATTR_GEN_AI_TOOL_NAME]: request.toolName,
        [ATTR_GEN_AI_TOOL_CALL_ID]: request.callId,
        [ATTR_GEN_AI_CONVERSATION_ID]: request.conversationId,
      },
    },
    (span) =>
      inSpan(span, run, (result) => {
        span.setAttribute('agent.tool.outcome', result.status);
        if (result.status !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR });
      }),
  );
}

/**
 * A wait on a person, as the span it was: from the gate's opening to its decision (which may be days later, across
 * continue-as-new and restarts), made once the gate settled, from its audit record. Who decided is their `users`
 * name (or the id they used), the channel where, never what they were shown.
 */
export function gateWaitSpan(record: AuditRecord): void {
  const span = tracer().startSpan(`gate_wait ${record.gate}`, {
    kind: SpanKind.INTERNAL,
    startTime: new Date(record.openedAt),
    attributes: {
      [ATTR_GEN_AI_CONVERSATION_ID]: record.workflowId,
      [ATTR_GEN_AI_TOOL_NAME]: record.tool,
      'agent.gate.id': record.gateId,
      'agent.gate.kind': record.gate,
      'agent.gate.channel': record.conversation,
      'agent.gate.outcome': record.outcome,
      'agent.gate.decided_by': record.by.person,
      'agent.gate.decided_via': record.by.via,
      'agent.gate.approvals': record.approvals.length,
      'agent.gate.wait_ms': record.waitedMs,
    },
  });
  span.end(new Date(record.at));
}

/**
 * The turn's own span, `invoke_agent`, once its answer is written: from the turn's start (maybe days ago, across
 * continue-as-new) to now, with the ids its activities were given as their parent, so the trace has its root.
 * A turn that ends otherwise (stopped, failed, at its step limit) leaves its activities under a root not exported.
 */
function endTurnSpan(conversationId: string): void {
  const turn = currentTurn();
  if (!turn) return;
  forcedSpanIds.next = { traceId: turn.traceId, spanId: turn.spanId };
  let span: Span;
  try {
    span = tracer().startSpan(
      'invoke_agent',
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(turn.startedAt),
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
          [ATTR_GEN_AI_CONVERSATION_ID]: conversationId,
        },
      },
      ROOT_CONTEXT,
    );
  } finally {
    forcedSpanIds.next = undefined;
  }
  span.end();
}

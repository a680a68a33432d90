/**
 * OpenTelemetry tracing, on by configuration only: a real gateway and worker export spans over OTLP/HTTP
 * to a local collector. The gateway's calls into a session and the worker's activity runs are traced with
 * the session's workflow id, calls an activity makes are children of its span, model calls and tool runs are GenAI
 * spans (`chat`, `execute_tool`), the wait on a person is a `gate_wait` span from the gate's opening to its decision,
 * and no span carries what was said.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpCollector, type CollectedSpan } from '../helpers/otlp-collector';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let collector: OtlpCollector;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  collector = await new OtlpCollector().start();
  stack = await startStack({
    temporalAddress: env.address,
    policy: { tools: { shell_execute: { policy: 'ask' } } },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
});

afterAll(async () => {
  await stack?.stop();
  await collector?.stop();
  await env?.teardown();
});

const named = (service: string, prefix: string) => (s: CollectedSpan) =>
  s.service === `durable-agent-${service}` && s.name.startsWith(prefix);

describe('OpenTelemetry tracing', () => {
  it("traces the gateway's calls into a session and the worker's activities, and records no message text", async () => {
    const sessionId = 'traced';
    await stack.web.say(sessionId, 'run `echo traced-words-4711`');
    const gate = await stack.web.pendingGate(sessionId);
    // A wait a person can see in the trace.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const decidedAfter = Date.now();
    await stack.web.decide(sessionId, gate.id, 'approve');
    await stack.web.answered(sessionId);

    const workflowId = `session:web:${sessionId}`;
    const toolRun = await until(
      'the tool run span',
      () => collector.spans.find(named('worker', 'RunActivity:runTool')),
      { context: () => collector.spans.map((s) => `${s.service} ${s.name}`).join(', ') },
    );
    expect(toolRun.attributes).toMatchObject({ temporalWorkflowId: workflowId });
    // The gateway's message (a new session: started for its owner, then signalled) and click, each a span
    // naming the session.
    expect(collector.spans.find(named('gateway', 'StartWorkflow:sessionWorkflow'))).toMatchObject({
      attributes: { temporalWorkflowId: workflowId },
    });
    expect(collector.spans.find(named('gateway', 'SignalWorkflow:userMessage'))).toMatchObject({
      attributes: { temporalWorkflowId: workflowId },
    });
    expect(collector.spans.find(named('gateway', 'SignalWorkflow:decide'))).toMatchObject({
      attributes: { temporalWorkflowId: workflowId },
    });
    // A call the policy check makes (reading the person's grants) is a child of that activity's span.
    const plan = collector.spans.find(named('worker', 'RunActivity:planToolCall'))!;
    expect(
      collector.spans.find((s) => s.name === 'QueryWorkflow:grants' && s.parentSpanId === plan.spanId),
    ).toMatchObject({ traceId: plan.traceId, attributes: { temporalWorkflowId: 'user:alice' } });

    // GenAI spans (the OpenTelemetry GenAI conventions), children of their activity's span.
    const chat = collector.spans.find(named('worker', 'chat '))!;
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.conversation.id': workflowId,
      'agent.model.fallback': false,
    });
    expect(chat.attributes['gen_ai.response.model']).toBeDefined();
    expect(collector.spans.find((s) => s.spanId === chat.parentSpanId)?.name).toBe('RunActivity:callModel');
    const tool = await until('the execute_tool span', () =>
      collector.spans.find(named('worker', 'execute_tool shell_execute')),
    );
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'shell_execute',
      'agent.tool.outcome': 'ok',
    });
    expect(tool.parentSpanId).toBe(toolRun.spanId);
    // The wait on a person is a span from the gate's opening to the decision, saying who decided and where.
    const wait = await until('the gate_wait span', () =>
      collector.spans.find(named('worker', 'gate_wait approval')),
    );
    expect(wait.attributes).toMatchObject({
      'agent.gate.id': gate.id,
      'agent.gate.outcome': 'approved',
      'agent.gate.decided_by': 'alice',
      'agent.gate.decided_via': 'web',
      'agent.gate.channel': 'web',
      'gen_ai.tool.name': 'shell_execute',
    });
    expect(wait.startMs).toBe(gate.createdAt);
    expect(wait.endMs).toBeGreaterThanOrEqual(decidedAfter);
    expect(Number(wait.attributes['agent.gate.wait_ms'])).toBe(wait.endMs - wait.startMs);

    // The turn is one trace: its invoke_agent span is the root of every activity it ran, waits included.
    const turn = await until('the invoke_agent span', () =>
      collector.spans.find(named('worker', 'invoke_agent')),
    );
    expect(turn.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': workflowId,
    });
    expect(turn.parentSpanId).toBeUndefined();
    for (const span of [chat, tool, wait, toolRun, plan]) expect(span.traceId, span.name).toBe(turn.traceId);
    expect(toolRun.parentSpanId).toBe(turn.spanId);
    expect(turn.startMs).toBeLessThanOrEqual(gate.createdAt);
    expect(turn.endMs).toBeGreaterThanOrEqual(wait.endMs);

    // Nothing that was said reaches the spans.
    for (const body of collector.raw) expect(body).not.toContain('traced-words-4711');
  });
});

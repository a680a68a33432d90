/**
 * OpenTelemetry tracing, on by configuration only: a real gateway and worker export spans over OTLP/HTTP
 * to a local collector. The gateway's calls into a session and the worker's activity runs are traced with
 * the session's workflow id, calls an activity makes are children of its span, and no span carries what
 * was said.
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

    // Nothing that was said reaches the spans.
    for (const body of collector.raw) expect(body).not.toContain('traced-words-4711');
  });
});

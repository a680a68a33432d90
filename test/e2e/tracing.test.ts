/**
 * OpenTelemetry tracing, on by configuration only: a real gateway and worker export spans over OTLP/HTTP
 * to a local collector. One trace follows a chat message from the gateway through the workflow to the
 * tool run, the approval click joins the same workflow, and no span carries what was said.
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
  it('follows a message from the gateway through the workflow to the tool, and records no message text or memo', async () => {
    const sessionId = 'traced';
    await stack.web.say(sessionId, 'run `echo traced-words-4711`');
    const gate = await stack.web.pendingGate(sessionId);
    await stack.web.decide(sessionId, gate.id, 'approve');
    await stack.web.answered(sessionId);

    const toolRun = await until(
      'the tool run span',
      () => collector.spans.find(named('worker', 'RunActivity:runTool')),
      { context: () => collector.spans.map((s) => `${s.service} ${s.name}`).join(', ') },
    );
    const byId = (spanId: string | undefined) => collector.spans.find((s) => s.spanId === spanId);
    // The tool ran as a child of the workflow's step that scheduled it...
    const scheduled = byId(toolRun.parentSpanId);
    expect(scheduled).toMatchObject({ service: 'durable-agent-worker', name: 'StartActivity:runTool' });
    // ...in the trace the gateway began when the first message started the session.
    const root = collector.spans.find((s) => s.traceId === toolRun.traceId && s.parentSpanId === undefined);
    expect(root).toMatchObject({
      service: 'durable-agent-gateway',
      name: 'SignalWithStartWorkflow:sessionWorkflow',
      attributes: { temporalWorkflowId: `session:web:${sessionId}` },
    });

    // The approval click is traced from the gateway into the workflow's signal handler.
    const click = collector.spans.find(named('gateway', 'SignalWorkflow:decide'));
    expect(click).toBeDefined();
    const handled = await until('the workflow handling the click', () =>
      collector.spans.find(named('worker', 'HandleSignal:decide')),
    );
    expect(handled).toMatchObject({ traceId: click!.traceId, parentSpanId: click!.spanId });

    // What the session waits for (its memo) stays out of the spans, as does everything that was said.
    expect(collector.raw.join('\n')).toContain('HandleSignal:decide');
    for (const body of collector.raw) expect(body).not.toContain('traced-words-4711');
  });
});

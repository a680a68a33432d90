/**
 * The worker's Prometheus endpoint (WORKER_METRICS_ADDRESS), scraped from a real running worker: the SDK's own
 * metrics and the product's (gates opened and settled with their wait, model tokens, tool runs) move with what the
 * test does, with low-cardinality labels only (no person, conversation or argument in any label). The gateway's
 * (GATEWAY_METRICS_ADDRESS): requests by surface, decisions sent, inbox reads, on a port of its own.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;
let metricsPort = 0;
let gatewayMetricsPort = 0;

beforeAll(async () => {
  metricsPort = await freePort();
  gatewayMetricsPort = await freePort();
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    env: {
      WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      GATEWAY_METRICS_ADDRESS: `127.0.0.1:${gatewayMetricsPort}`,
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

async function scrape(port = metricsPort): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  return await response.text();
}

/** The sum of a metric's samples whose labels include every `labels` pair. */
function total(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

describe('worker metrics', () => {
  it('counts gates, decisions, their wait, model tokens and tool runs; the SDK metrics are there too', async () => {
    const before = await until('the metrics endpoint', () => scrape().catch(() => undefined), {
      timeoutMs: 30_000,
    });
    const opened = total(before, 'agent_gates_opened_total', { kind: 'approval', channel: 'web' });
    const approved = total(before, 'agent_gate_outcomes_total', { kind: 'approval', outcome: 'approved' });

    const sessionId = `metrics-${randomUUID().slice(0, 8)}`;
    await stack.web.say(sessionId, 'run `echo measured`', 'alice');
    const gate = await stack.web.pendingGate(sessionId, 'alice');
    expect((await stack.web.decide(sessionId, gate.id, 'approve')).status).toBe(202);
    await stack.web.waitFor(sessionId, (v) => v.status === 'idle', 'the answer', 60_000, 'alice');

    const after = await until(
      'the figures to move',
      async () => {
        const text = await scrape();
        return total(text, 'agent_gate_outcomes_total', { kind: 'approval', outcome: 'approved' }) > approved
          ? text
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(total(after, 'agent_gates_opened_total', { kind: 'approval', channel: 'web' })).toBe(opened + 1);
    expect(total(after, 'agent_gate_wait_count', { kind: 'approval', outcome: 'approved' })).toBeGreaterThan(
      0,
    );
    expect(total(after, 'agent_model_tokens_total', { kind: 'output' })).toBeGreaterThan(0);
    expect(total(after, 'agent_tool_runs_total', { tool: 'shell_execute', outcome: 'ok' })).toBeGreaterThan(
      0,
    );
    // The SDK's own worker metrics, on the same endpoint.
    expect(after).toMatch(/^temporal_\w+/m);
    expect(
      total(after, 'temporal_workflow_completed_total') + total(after, 'temporal_request_total'),
    ).toBeGreaterThan(0);
    // No person or conversation in any label.
    for (const line of after.split('\n').filter((l) => l.startsWith('agent_'))) {
      expect(line).not.toContain('alice');
      expect(line).not.toContain(sessionId);
      expect(line).not.toContain('echo measured');
    }
  });

  it("counts the gateway's requests, decisions sent and inbox reads on a port of its own", async () => {
    const scrapeGateway = () => scrape(gatewayMetricsPort);
    const before = await until('the gateway metrics endpoint', () => scrapeGateway().catch(() => undefined), {
      timeoutMs: 30_000,
    });
    const sent = { channel: 'web', kind: 'decision', result: 'sent' };
    const decided = total(before, 'agent_gateway_decisions_total', sent);
    const reads = total(before, 'agent_inbox_reads_total', { result: 'ok' });
    const apiOk = total(before, 'agent_gateway_requests_total', { surface: 'web_api', status: '2xx' });

    const sessionId = `gw-metrics-${randomUUID().slice(0, 8)}`;
    await stack.web.say(sessionId, 'run `echo counted`', 'alice');
    const gate = await stack.web.pendingGate(sessionId, 'alice');
    expect((await stack.web.request('GET', '/inbox', undefined, 'alice')).status).toBe(200);
    expect((await stack.web.decide(sessionId, gate.id, 'approve')).status).toBe(202);
    await stack.web.waitFor(sessionId, (v) => v.status === 'idle', 'the answer', 60_000, 'alice');

    const after = await scrapeGateway();
    expect(total(after, 'agent_gateway_decisions_total', sent)).toBe(decided + 1);
    expect(total(after, 'agent_inbox_reads_total', { result: 'ok' })).toBe(reads + 1);
    expect(
      total(after, 'agent_gateway_requests_total', { surface: 'web_api', status: '2xx' }),
    ).toBeGreaterThan(apiOk + 2);
    // The process's own figures, prefixed.
    expect(after).toMatch(/^agent_gateway_process_cpu_seconds_total /m);
    for (const line of after.split('\n').filter((l) => l.startsWith('agent_'))) {
      expect(line).not.toContain('alice');
      expect(line).not.toContain(sessionId);
      expect(line).not.toContain('echo counted');
    }
    // Only there: the public listener does not serve them, and the metrics port serves nothing else.
    expect(await (await fetch(`http://127.0.0.1:${stack.port}/metrics`)).text()).not.toContain(
      'agent_gateway_requests_total',
    );
    expect((await fetch(`http://127.0.0.1:${gatewayMetricsPort}/api/inbox`)).status).toBe(404);
  });
});

/**
 * The worker's Prometheus endpoint (WORKER_METRICS_ADDRESS), scraped from a real running worker: the SDK's own
 * metrics and the product's (gates opened and settled with their wait, model tokens, tool runs) move with what the
 * test does, with low-cardinality labels only (no person, conversation or argument in any label). The gateway's
 * (GATEWAY_METRICS_ADDRESS): requests by surface, decisions sent, inbox reads, on a port of its own.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideSignal } from '../../workflows/session/contract';
import { FakeOpenAi } from '../helpers/fake-openai';
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
    // Refused: a second decision of the decided gate (the rules), and one no gateway signed (the seal).
    const refused = (text: string, cause: string) => total(text, 'agent_decisions_refused_total', { cause });
    expect((await stack.web.decide(sessionId, gate.id, 'deny')).status).toBe(202);
    await env.client.workflow
      .getHandle(`session:web:${sessionId}`)
      .signal(decideSignal, { gateId: gate.id, choice: 'deny', userId: 'alice' });

    const after = await until(
      'the figures to move',
      async () => {
        const text = await scrape();
        return total(text, 'agent_gate_outcomes_total', { kind: 'approval', outcome: 'approved' }) >
          approved &&
          refused(text, 'rule') > refused(before, 'rule') &&
          refused(text, 'seal') > refused(before, 'seal')
          ? text
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(total(after, 'agent_gates_opened_total', { kind: 'approval', channel: 'web' })).toBe(opened + 1);
    expect(refused(after, 'rule')).toBe(refused(before, 'rule') + 1);
    expect(refused(after, 'seal')).toBe(refused(before, 'seal') + 1);
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

  it('counts shell commands killed, by their timeout and by Stop', async () => {
    const before = await until('the metrics endpoint', () => scrape().catch(() => undefined), {
      timeoutMs: 30_000,
    });
    const kills = (text: string, reason: string) => total(text, 'agent_sandbox_kills_total', { reason });
    const timedOut = kills(before, 'timeout');
    const cancelled = kills(before, 'cancelled');

    // A command that outlives its timeout.
    const slow = `kills-timeout-${randomUUID().slice(0, 8)}`;
    await stack.web.say(slow, 'call shell_execute {"command": "sleep 30", "timeout_seconds": 1}', 'alice');
    await stack.web.decide(slow, (await stack.web.pendingGate(slow, 'alice')).id, 'approve');
    const answered = await stack.web.waitFor(
      slow,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
      'the answer',
      60_000,
      'alice',
    );
    expect(JSON.stringify(answered.transcript)).toContain('timed out after 1s and was killed');

    // A command stopped while it runs: it says it started, then the person presses Stop.
    const stopped = `kills-stop-${randomUUID().slice(0, 8)}`;
    await stack.web.say(stopped, 'call shell_execute {"command": "echo on > started; sleep 60"}', 'alice');
    await stack.web.decide(stopped, (await stack.web.pendingGate(stopped, 'alice')).id, 'approve');
    // The conversation's working directory is named after its workflow id, which contains the session's id.
    const workdirs = path.join(stack.env.DATA_DIR!, 'workdirs');
    await until(
      'the command to run',
      () =>
        existsSync(workdirs) &&
        readdirSync(workdirs).some(
          (dir) => dir.includes(stopped) && existsSync(path.join(workdirs, dir, 'started')),
        ),
      { timeoutMs: 60_000 },
    );
    expect((await stack.web.request('POST', `/sessions/${stopped}/stop`, {}, 'alice')).status).toBe(202);
    await stack.web.waitFor(stopped, (v) => v.status === 'idle', 'the stop', 60_000, 'alice');

    const after = await until(
      'both kills counted',
      async () => {
        const text = await scrape();
        return kills(text, 'timeout') > timedOut && kills(text, 'cancelled') > cancelled ? text : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(kills(after, 'timeout')).toBe(timedOut + 1);
    expect(kills(after, 'cancelled')).toBe(cancelled + 1);
    expect(kills(after, 'launcher_ended')).toBe(kills(before, 'launcher_ended'));
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

describe('model metrics', () => {
  let fake: FakeOpenAi;
  let modelStack: Stack | undefined;
  let port = 0;

  beforeAll(async () => {
    port = await freePort();
    // The primary is out of capacity; the fallback answers. A message asking for "the refused model" meets a
    // revoked key, which no fallback may paper over.
    fake = await new FakeOpenAi(
      (request) => {
        const last = request.messages.at(-1)?.content ?? '';
        if (request.model === 'small') return { text: 'answered by the fallback' };
        if (last.includes('the refused model'))
          return {
            status: 401,
            body: { error: { message: 'Incorrect API key', type: 'invalid_request_error' } },
          };
        return {
          status: 503,
          body: { error: { message: 'Service unavailable', type: 'server_error', code: null } },
        };
      },
      { latency: [40, 120] },
    ).start();
    modelStack = await startStack({
      temporalAddress: env.address,
      env: {
        ...fake.env,
        MODEL: 'big',
        MODEL_FALLBACKS: 'openai:small',
        WORKER_METRICS_ADDRESS: `127.0.0.1:${port}`,
      },
    });
  });

  afterAll(async () => {
    await modelStack?.stop();
    await fake?.stop();
  });

  it('counts fallbacks by reason and failed model calls by type', async () => {
    const web = modelStack!.web;
    const before = await until('the metrics endpoint', () => scrape(port).catch(() => undefined), {
      timeoutMs: 30_000,
    });
    const fellBack = { from: 'openai:big', to: 'openai:small', reason: 'unavailable' };
    const fallbacks = total(before, 'agent_model_fallbacks_total', fellBack);

    const sessionId = `fallback-metrics-${randomUUID().slice(0, 8)}`;
    await web.say(sessionId, 'hello there');
    const view = await web.waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'assistant'),
      'the answer',
      60_000,
    );
    expect(JSON.stringify(view.transcript)).toContain('answered by the fallback');

    const refused = `refused-metrics-${randomUUID().slice(0, 8)}`;
    await web.say(refused, 'please ask the refused model');
    await web.waitFor(
      refused,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'assistant'),
      'the failure told',
      60_000,
    );

    const after = await until(
      'the figures to move',
      async () => {
        const text = await scrape(port);
        return total(text, 'agent_model_failures_total', { type: 'ModelAuthError' }) > 0 ? text : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(total(after, 'agent_model_fallbacks_total', fellBack)).toBeGreaterThan(fallbacks);
    expect(
      total(after, 'agent_model_failures_total', { model: 'openai:big', type: 'ModelUnavailable' }),
    ).toBeGreaterThan(0);
    expect(total(after, 'agent_model_failures_total', { model: 'openai:big', type: 'ModelAuthError' })).toBe(
      1,
    );
    // Refused by the primary: never passed on to the fallback.
    expect(
      fake.requests.filter((r) => r.model === 'small' && JSON.stringify(r).includes('refused model')),
    ).toEqual([]);
  });
});

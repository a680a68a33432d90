/**
 * Payload encryption: with PAYLOAD_KEY the worker and gateway encrypt every payload, so the history the
 * Temporal server stores holds no plaintext; the gateway's codec endpoint decodes for the Temporal UI.
 */
import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

const PAYLOAD_KEY = randomBytes(32).toString('base64');
const CODEC_TOKEN = 'codec-token-for-tests';
let env: TestWorkflowEnvironment;
let stack: Stack;
beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    env: { PAYLOAD_KEY, CODEC_AUTH_TOKEN: CODEC_TOKEN, CODEC_CORS_ORIGINS: 'http://localhost:8233' },
  });
});
afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

/** Every payload in a history (inputs, signals, activity inputs and results), in the codec's JSON form. */
function payloadsOf(history: unknown): JsonPayload[] {
  const found: JsonPayload[] = [];
  const visit = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (Array.isArray(n.payloads))
      for (const p of n.payloads as Record<string, unknown>[]) found.push(toJson(p));
    for (const value of Object.values(n)) visit(value);
  };
  visit(history);
  return found;
}

function toJson(p: Record<string, unknown>): JsonPayload {
  const metadata = Object.fromEntries(
    Object.entries((p.metadata ?? {}) as Record<string, Uint8Array>).map(([k, v]) => [
      k,
      Buffer.from(v).toString('base64'),
    ]),
  );
  return { metadata, data: Buffer.from((p.data as Uint8Array) ?? new Uint8Array()).toString('base64') };
}

describe('payload encryption', () => {
  it('stores only ciphertext in history, works end to end, and decodes for operators through the codec endpoint', async () => {
    const sessionId = 'codec-session';
    await stack.web.say(sessionId, 'hello encrypted world');
    const view = await stack.web.answered(sessionId);
    expect(view.transcript.at(-1)).toMatchObject({
      role: 'assistant',
      text: expect.stringContaining('hello encrypted world'),
    });

    const history = await env.client.workflow.getHandle(`session:web:${sessionId}`).fetchHistory();
    const payloads = payloadsOf(history);
    expect(payloads.length).toBeGreaterThan(3);
    const raw = payloads.map((p) => Buffer.from(p.data, 'base64').toString('latin1')).join('\n');
    expect(raw).not.toContain('hello encrypted world');
    const plainOnes = payloads.filter(
      (p) => Buffer.from(p.metadata.encoding!, 'base64').toString() !== 'binary/encrypted',
    );
    // Only the SDK's own markers stay plain: patch markers (a version flag) and a local activity's bookkeeping
    // (which activity, which attempt, when; its result is encrypted like any other payload).
    const LOCAL_ACTIVITY_KEYS = [
      'seq',
      'attempt',
      'activity_id',
      'activity_type',
      'complete_time',
      'backoff',
      'original_schedule_time',
    ];
    for (const text of plainOnes.map((p) => Buffer.from(p.data, 'base64').toString())) {
      if (text.startsWith('{"seq"'))
        expect(LOCAL_ACTIVITY_KEYS).toEqual(expect.arrayContaining(Object.keys(JSON.parse(text))));
      else expect(text).toMatch(/^\{"id":"[a-z0-9-]+","deprecated":(true|false)\}$/);
    }

    const decode = (body: unknown, auth = `Bearer ${CODEC_TOKEN}`) =>
      fetch(`${stack.web.baseUrl}/codec/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth, origin: 'http://localhost:8233' },
        body: JSON.stringify(body),
      });
    expect((await decode({ payloads }, 'Bearer wrong')).status).toBe(401);
    expect((await decode({ nope: 1 })).status).toBe(400);
    const decoded = await decode({ payloads });
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const plain = ((await decoded.json()) as { payloads: JsonPayload[] }).payloads
      .map((p) => Buffer.from(p.data, 'base64').toString('utf8'))
      .join('\n');
    expect(plain).toContain('hello encrypted world');

    const preflight = await fetch(`${stack.web.baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
  });
});

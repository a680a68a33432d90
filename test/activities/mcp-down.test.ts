/**
 * An MCP server that is down costs one connect attempt, not one per conversation: after a failed connect the pool
 * answers at once (with the server's own words and when it is tried again), retries it on a timer in the
 * background with backoff (from 1 s, at most 30 s), and names it in the log; once the server works again its tools are back. A real stdio process: bash
 * runs the notes server once a flag file exists, and before that fails at start as a misconfigured server does.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpPool } from '../../activities/mcp/pool';
import type { McpServerConfig } from '../../infra/config';
import { tempDir } from '../helpers/config';
import { pidsWith } from '../helpers/processes';
import { until } from '../helpers/until';

const SERVER = path.resolve(__dirname, '../fixtures/mcp-notes-server.mjs');
const dir = tempDir('mcp-down-');
const starts = path.join(dir, 'starts');
const fixed = path.join(dir, 'fixed');
const script = `echo start >> "${starts}"; if [ -f "${fixed}" ]; then exec "${process.execPath}" "${SERVER}" "${dir}/notes"; fi; echo "None of the specified directories are accessible" >&2; exit 1`;
const config = {
  notes: { command: '/bin/bash', args: ['-c', script], env: {}, tools: {} },
} as unknown as Record<string, McpServerConfig>;
const logged: { message: string; fields: object }[] = [];
const pool = new McpPool(
  config,
  () => {
    throw new Error('no credentials here');
  },
  { firstRetryMs: 500, log: (message, fields) => logged.push({ message, fields }) },
);
const startCount = () =>
  existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0;

// The fixed server keeps running under the pool: ended with the test (its command line names this directory).
afterAll(() => {
  for (const pid of pidsWith(dir)) process.kill(pid, 'SIGKILL');
});

describe('an MCP server that is down', () => {
  it('is tried once, then answered at once while down, retried in the background, and back when fixed', async () => {
    const first = await pool.discover('U1');
    expect(first.tools).toEqual([]);
    // Its own words, not "Connection closed".
    expect(first.errors[0]!.message).toContain('None of the specified directories are accessible');
    expect(startCount()).toBe(1);
    expect(logged[0]).toMatchObject({ message: 'MCP server unavailable', fields: { server: 'notes' } });

    // Straight after: no second process, an answer that says why and when it is tried again.
    const again = await pool.discover('U2');
    expect(again.errors[0]!.message).toMatch(
      /unreachable since \d\d:\d\d UTC; tried again in the background/,
    );
    const call = await pool.call('notes', 'read_note', { name: 'x' }, 'U1', new AbortController().signal);
    expect(call).toMatchObject({ status: 'error', content: expect.stringContaining('unavailable') });
    expect(startCount()).toBe(1);

    // After the backoff, an attempt runs in the background on its own (still failing: the backoff doubles).
    await until('a background retry', () => startCount() === 2);
    await until('the retry recorded', () => logged.length === 2);
    expect(logged[1]!.fields).toMatchObject({ retryInMs: 1_000 });

    // Fixed: the next background attempt connects, and the next look lists the tools again.
    writeFileSync(fixed, '');
    const back = await until('the tools back', async () => {
      const found = await pool.discover('U1');
      return found.tools.length ? found : undefined;
    });
    expect(back.errors).toEqual([]);
    expect(back.tools.map((t) => t.name)).toContain('notes__read_note');
    expect(logged.at(-1)).toMatchObject({ message: 'MCP server back', fields: { server: 'notes' } });
  });
});

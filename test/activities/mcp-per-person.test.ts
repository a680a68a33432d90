/**
 * stdio MCP servers per person (`perPerson`, and always with `auth`): each person's calls go to a process of their
 * own, never another person's; a process nobody used for a while is stopped and started again on next use. A real
 * stdio server (the official SDK), its processes seen through the pids it reports.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpPool } from '../../activities/mcp/pool';
import type { McpServerConfig } from '../../infra/config';
import { tempDir } from '../helpers/config';
import { pidsWith } from '../helpers/processes';
import { until } from '../helpers/until';

const dir = tempDir('mcp-per-person-');
const config = {
  notes: {
    command: process.execPath,
    args: [path.resolve(__dirname, '../fixtures/mcp-notes-server.mjs'), dir],
    env: {},
    tools: {},
    perPerson: true,
  },
} as unknown as Record<string, McpServerConfig>;
const logged: string[] = [];
const pool = new McpPool(
  config,
  () => {
    throw new Error('no credentials here');
  },
  { idleProcessMs: 2_000, log: (message) => logged.push(message) },
);
const call = (userId: string, text: string) =>
  pool.call('notes', 'write_note', { name: userId, text }, userId, new AbortController().signal);

afterAll(async () => {
  await pool.close();
  for (const pid of pidsWith(dir)) process.kill(pid, 'SIGKILL');
});

describe('stdio MCP servers per person', () => {
  it('gives each person a process of their own, and stops one nobody used for a while', async () => {
    expect(await call('alice', 'one')).toMatchObject({ status: 'ok' });
    const aliceOnly = pidsWith(dir);
    expect(aliceOnly).toHaveLength(1);
    expect(await call('bob', 'two')).toMatchObject({ status: 'ok' });
    const both = pidsWith(dir);
    expect(both).toHaveLength(2);
    // Alice's second call goes to her process again: still two.
    expect(await call('alice', 'three')).toMatchObject({ status: 'ok' });
    expect(pidsWith(dir)).toEqual(both);
    // Idle for longer than idleProcessMs: both stopped, and said in the log.
    await until('the idle processes stopped', () => pidsWith(dir).length === 0, { timeoutMs: 10_000 });
    expect(logged.filter((m) => m === 'MCP server process stopped while idle')).toHaveLength(2);
    // Next use starts a new one.
    expect(await call('alice', 'four')).toMatchObject({ status: 'ok' });
    const again = pidsWith(dir);
    expect(again).toHaveLength(1);
    expect(both).not.toContain(again[0]);
  });

  it('stops the idle process of a person whose id has a line break, and only theirs', async () => {
    await until('no processes left from before', () => pidsWith(dir).length === 0, { timeoutMs: 10_000 });
    expect(await call('carol\nx', 'one')).toMatchObject({ status: 'ok' });
    const [odd] = pidsWith(dir);
    expect(await call('carol', 'two')).toMatchObject({ status: 'ok' });
    const [carols] = pidsWith(dir).filter((pid) => pid !== odd);
    // Carol keeps using hers; the other one, unused, is stopped (its key must not be read as carol's).
    await until(
      'the unused process stopped',
      async () => {
        expect(await call('carol', 'again')).toMatchObject({ status: 'ok' });
        return !pidsWith(dir).includes(odd!);
      },
      { timeoutMs: 10_000 },
    );
    expect(pidsWith(dir)).toEqual([carols]);
  });
});

/**
 * A stdio MCP server is the operator's program, started by the worker itself, outside the sandbox. It must
 * still not get what the worker's own starter left open (a supervisor's log file, a job runner's pipe) nor the
 * worker's tokens. Each attempt is a row in the security scoreboard; "lost" means the server held either.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { McpPool } from '../../activities/mcp/pool';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { pidsWith } from '../helpers/processes';
import { until } from '../helpers/until';

const SECRET = `xoxb-mcp-${randomBytes(8).toString('hex')}`;
const ROOT = path.resolve(__dirname, '../..');
const SERVER = path.join(ROOT, 'test/fixtures/mcp-notes-server.mjs');

/** Node arguments for a worker-like process: its MCP pool lists a stdio server's tools, then it waits. */
function workerLikeArgs(notesDir: string): string[] {
  const config = { notes: { command: process.execPath, args: [SERVER, notesDir], env: {}, tools: {} } };
  return [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    `
    const { readFileSync } = await import('node:fs');
    // Its starting point, before the pool starts anything: fd 200's flags (close-on-exec is 02000000).
    process.stdout.write('fd200 ' + /^flags:\\s+([0-7]+)/m.exec(readFileSync('/proc/self/fdinfo/200', 'utf8'))[1] + '\\n');
    const { McpPool } = await import(${JSON.stringify(path.join(ROOT, 'activities/mcp/pool.ts'))});
    const pool = new McpPool(${JSON.stringify(config)}, () => { throw new Error('no credentials here'); });
    const { tools, errors } = await pool.discover('U1');
    process.stdout.write('listed ' + tools.length + ' ' + JSON.stringify(errors) + '\\n');
    setInterval(() => {}, 60_000);`,
  ];
}

const linkOf = (link: string) => {
  try {
    return readlinkSync(link);
  } catch {
    return '?';
  }
};

describe('outside processes the worker starts', () => {
  it('a stdio MCP server holds neither descriptors nor tokens the worker was started with', async () => {
    const tally = new Tally();
    for (let run = 0; run < 2; run++) {
      const dir = tempDir('mcp-fds-');
      const log = path.join(dir, 'supervisor.log');
      const notesDir = path.join(dir, 'notes');
      // The worker's starter opens a log at 200, not close-on-exec (as a supervisor's shell would).
      const worker = spawn(
        'bash',
        ['-c', 'exec "$@" 200>>"$LOG"', 'bash', process.execPath, ...workerLikeArgs(notesDir)],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, LOG: log, SLACK_BOT_TOKEN: SECRET },
        },
      );
      let output = '';
      worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        await until('the server listed', () => /listed/.test(output), { timeoutMs: 30_000 });
        expect(output).toMatch(/listed [1-9]\d* \[\]/);
        // What the row tests: the worker held fd 200 and it was not close-on-exec.
        expect(parseInt(/fd200 ([0-7]+)/.exec(output)?.[1] ?? '', 8) & 0o2000000).toBe(0);
        const servers = pidsWith(`${notesDir}\0`);
        expect(servers).toHaveLength(1);
        const held = readdirSync(`/proc/${servers[0]}/fd`)
          .map((fd) => ({ fd, to: linkOf(`/proc/${servers[0]}/fd/${fd}`) }))
          .filter(({ to }) => to === log);
        if (held.length) tally.lost++;
        tally.check(
          held.length === 0,
          () => `the MCP server holds ${held.map((h) => `${h.fd} -> ${h.to}`).join(', ')}`,
        );
        // Under memory pressure the OOM killer ends the server before the worker (it is connected again on use).
        expect(readFileSync(`/proc/${servers[0]}/oom_score_adj`, 'utf8').trim()).toBe('1000');
        // Nor the worker's tokens: the server gets what it is configured with, and a minimal default.
        const leaked = readFileSync(`/proc/${servers[0]}/environ`, 'utf8').includes(SECRET);
        if (leaked) tally.lost++;
        tally.check(!leaked, () => "the MCP server has the worker's SLACK_BOT_TOKEN in its environment");
      } finally {
        worker.kill('SIGKILL');
        await until('the server gone', () => pidsWith(`${notesDir}\0`).length === 0, { timeoutMs: 5_000 });
      }
    }
    tally.finish('MCP stdio server: descriptors and tokens it inherits');
  });

  it('reports a server command that does not exist as such (it is not started through choom)', async () => {
    const pool = new McpPool(
      {
        gone: {
          command: 'no-such-mcp-server-4711',
          args: [],
          env: {},
          tools: {},
          timeout: 10_000,
          trustAnnotations: false,
        },
      },
      () => {
        throw new Error('no credentials here');
      },
    );
    try {
      const { errors } = await pool.discover('U1');
      expect(errors).toEqual([{ server: 'gone', message: expect.stringContaining('ENOENT') }]);
    } finally {
      await pool.close();
    }
  });
});

/**
 * Per-person stdio tool servers hold their person's token in their environment. With the worker as root, each runs
 * under a uid of its own (activities/mcp/server-uid.ts), so one person's server cannot read another's token from
 * /proc, nor the worker's own files. Attacked as such a server would: by reading the other process's environment
 * and the worker's DATA_DIR under its own uid. Each attempt is a row in the security scoreboard; "lost" means it read.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpPool } from '../../activities/mcp/pool';
import type { McpServerConfig } from '../../infra/config';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { pidsWith } from '../helpers/processes';
import { readableCheckout, requireRootFor } from '../helpers/readable-checkout';
import { serverDir } from '../helpers/mcp-fixtures';
import { until } from '../helpers/until';

requireRootFor('giving tool servers uids of their own');
/** The fixture, readable by any uid wherever this checkout lives (a clone under /root too). */
const SERVER = path.join(readableCheckout(), 'test/fixtures/mcp-notes-server.mjs');
const notesDir = tempDir('mcp-uids-');
// The notes server writes its notes here, under whichever uid it runs as.
chmodSync(notesDir, 0o1777);
/** The worker's DATA_DIR: private to the worker (0700), with a secret in it. */
const dataDir = tempDir('mcp-uids-data-');
chmodSync(dataDir, 0o700);
const secretFile = path.join(dataDir, 'vault.key');
writeFileSync(secretFile, 'the-worker-vault-key', { mode: 0o600 });

const config = {
  notes: { command: process.execPath, args: [SERVER, notesDir], env: {}, tools: {}, perPerson: true },
  shared: { command: process.execPath, args: [SERVER, notesDir, 'shared'], env: {}, tools: {} },
} as unknown as Record<string, McpServerConfig>;
const pool = new McpPool(
  config,
  () => {
    throw new Error('no credentials here');
  },
  { isolation: { workdirsDir: path.join(dataDir, 'workdirs') } },
);
const tally = new Tally();

afterAll(async () => {
  await pool.close();
  for (const pid of pidsWith(notesDir)) process.kill(pid, 'SIGKILL');
  if (tally.runs) tally.finish('mcp: a tool server reads no other server’s token');
});

const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
/** Reads a file as `uid` would (setpriv, as the server itself runs): its text, or undefined when refused. */
function readAs(uid: number, file: string): string | undefined {
  try {
    return execFileSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'cat', file], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
  } catch {
    return undefined;
  }
}

describe('stdio tool servers under uids of their own', () => {
  it('runs each person’s server, and a shared one, under a uid of its own that reads no other’s secrets', async () => {
    const call = (server: string, userId: string) =>
      pool.call(
        server,
        'write_note',
        { name: `${server}-${userId}`, text: 'x' },
        userId,
        new AbortController().signal,
      );
    for (const [server, userId] of [
      ['notes', 'alice'],
      ['notes', 'bob'],
      ['shared', 'alice'],
    ] as const)
      expect(await call(server, userId)).toMatchObject({ status: 'ok' });
    const pids = pidsWith(notesDir).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(SERVER),
    );
    expect(pids).toHaveLength(3);
    const uids = pids.map(uidOf);
    // Three processes, three uids, none of them root or the worker's.
    expect(new Set(uids).size).toBe(3);
    for (const uid of uids) expect(uid).toBeGreaterThanOrEqual(40_000);
    // Each home is its own uid's alone; the notes were written by the servers themselves.
    for (const [i, pid] of pids.entries()) {
      const home = /(?:^|\0)HOME=([^\0]+)/.exec(readFileSync(`/proc/${pid}/environ`, 'utf8'))![1]!;
      expect(statSync(home)).toMatchObject({ uid: uids[i], mode: expect.any(Number) });
      expect(statSync(home).mode & 0o777).toBe(0o700);
    }
    // The same person's next call goes to the same process (the uid is kept, not made again).
    expect(await call('notes', 'alice')).toMatchObject({ status: 'ok' });
    expect(
      pidsWith(notesDir).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(SERVER)),
    ).toHaveLength(3);

    for (const i of pids.keys())
      for (const [j, other] of pids.entries()) {
        if (i === j) continue;
        // Another server's environment (where a person's token lives) and its memory map.
        for (const file of ['environ', 'maps'])
          tally.attempt(
            readAs(uids[i]!, `/proc/${other}/${file}`) === undefined,
            () => `uid ${uids[i]} read /proc/${other}/${file} of uid ${uids[j]}`,
          );
      }
    // The worker's own secrets in its DATA_DIR.
    for (const uid of uids)
      tally.attempt(
        readAs(uid, secretFile) === undefined,
        () => `uid ${uid} read the worker's ${secretFile}`,
      );
    // The check itself can see: each uid reads its own environment.
    for (const [i, pid] of pids.entries())
      expect(readAs(uids[i]!, `/proc/${pid}/environ`)).toContain('HOME=');
  });

  it('puts a worker’s servers in PID and mount namespaces of their own when the worker is not root', async () => {
    const NOBODY = 65534;
    const checkout = readableCheckout();
    const dir = serverDir('mcp-ns-');
    // The unprivileged worker's DATA_DIR, its own (as the image's volume is), with a secret in it.
    const data = tempDir('mcp-ns-data-');
    chownSync(data, NOBODY, NOBODY);
    chmodSync(data, 0o700);
    const vaultKey = `vault-key-${randomBytes(6).toString('hex')}`;
    writeFileSync(path.join(data, 'vault.key'), vaultKey, { mode: 0o600 });
    chownSync(path.join(data, 'vault.key'), NOBODY, NOBODY);
    const secret = randomBytes(6).toString('hex');
    const tokenOf = (who: string) => `token-of-${who}-${secret}`;
    const servers = {
      mine: {
        command: process.execPath,
        args: [path.join(checkout, 'test/fixtures/mcp-notes-server.mjs'), dir],
        env: {},
        tools: {},
        auth: 'acme',
        tokenEnv: 'NOTES_TOKEN',
      },
    };
    const script = `
      const { McpPool } = await import(${JSON.stringify(path.join(checkout, 'activities/mcp/pool.ts'))});
      const credentials = { authorization: async (userId) => ({ ok: true, token: 'token-of-' + userId + '-' + ${JSON.stringify(secret)} }) };
      const pool = new McpPool(${JSON.stringify(servers)}, () => credentials, {
        isolation: { workdirsDir: ${JSON.stringify(path.join(data, 'workdirs'))} },
        log: (message) => process.stdout.write('log ' + message + '\\n'),
      });
      for (const who of ['alice', 'bob']) {
        const result = await pool.call('mine', 'write_note', { name: who, text: 'x' }, who, new AbortController().signal);
        process.stdout.write(who + ' ' + result.status + '\\n');
      }
      process.stdout.write('ready\\n');
      setInterval(() => {}, 60_000);`;
    const worker = spawn(
      'setpriv',
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        process.execPath,
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        script,
      ],
      {
        cwd: checkout,
        env: { PATH: process.env.PATH ?? '', HOME: '/tmp' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    worker.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await until('both servers called', () => output.includes('ready'), {
        timeoutMs: 60_000,
        context: () => output,
      });
      expect(output).toContain('alice ok');
      expect(output).toContain('bob ok');
      expect(output).not.toContain('nothing between them');
      const pids = pidsWith(dir).filter((pid) => {
        if (pid === worker.pid) return false;
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmdline.includes('mcp-notes-server') && !cmdline.split('\0')[0]!.endsWith('bwrap');
      });
      expect(pids).toHaveLength(2);
      const seen = pids.map((pid) => {
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
        const who = environ.includes(tokenOf('alice')) ? 'alice' : 'bob';
        // Everything visible from inside that server's namespaces, even to root there: every process's environment
        // and the worker's vault key.
        const inside = execFileSync(
          'nsenter',
          [
            '-t',
            String(pid),
            '--mount',
            '--pid',
            '--',
            'sh',
            '-c',
            `cat /proc/[0-9]*/environ; cat ${path.join(data, 'vault.key')}; true`,
          ],
          { stdio: ['ignore', 'pipe', 'ignore'] },
        ).toString();
        return { who, inside };
      });
      expect(new Set(seen.map((s) => s.who)).size).toBe(2);
      for (const { who, inside } of seen) {
        // The check can see: its own token is there.
        expect(inside).toContain(tokenOf(who));
        const other = who === 'alice' ? 'bob' : 'alice';
        tally.attempt(!inside.includes(tokenOf(other)), () => `${who}'s server saw ${other}'s token`);
        tally.attempt(!inside.includes(vaultKey), () => `${who}'s server read the worker's vault key`);
      }
    } finally {
      worker.kill('SIGKILL');
      for (const pid of pidsWith(dir)) process.kill(pid, 'SIGKILL');
    }
  });
});

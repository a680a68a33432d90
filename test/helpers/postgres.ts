/**
 * A real PostgreSQL server for tests: Debian's `postgresql` package (`.ci/run` installs it), a fresh
 * cluster made by `initdb` in a temp dir, started by `pg_ctl` on a free loopback port. PostgreSQL refuses
 * to run as root, so as root the cluster belongs to the package's `postgres` user (via `setpriv`).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './processes';

const run = promisify(execFile);
const USER = 'postgres';

/** The newest installed server's binaries (PG_BIN overrides). */
function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0])
    throw new Error(`no PostgreSQL server under ${root}: apt-get install postgresql (as .ci/run does)`);
  return path.join(root, versions[0], 'bin');
}

export interface TestPostgres {
  /** A connection URL for the maintenance database (`postgres`). */
  url: string;
  /** A new, empty database: its connection URL. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-pg-'));
  const asRoot = process.getuid?.() === 0;
  const postgresUser = asRoot ? await run('id', ['-u', 'postgres']).then((r) => r.stdout.trim()) : undefined;
  if (postgresUser) {
    chownSync(dir, Number(postgresUser), -1);
    chmodSync(dir, 0o700);
  }
  const as = (tool: string, args: string[]) =>
    postgresUser
      ? run('setpriv', [
          '--reuid=postgres',
          '--regid=postgres',
          '--init-groups',
          path.join(bin, tool),
          ...args,
        ])
      : run(path.join(bin, tool), args);
  const data = path.join(dir, 'data');
  const port = await freePort();
  // Passwords over TCP, as a real server asks for them.
  const password = randomBytes(12).toString('hex');
  const pwfile = path.join(dir, 'pwfile');
  writeFileSync(pwfile, password, { mode: 0o600 });
  if (postgresUser) chownSync(pwfile, Number(postgresUser), -1);
  await as('initdb', [
    ...['-D', data, '-U', USER, '--pwfile', pwfile, '-E', 'UTF8', '--no-sync'],
    ...['--auth-local=trust', '--auth-host=scram-sha-256'],
  ]);
  await as('pg_ctl', [
    '-D',
    data,
    '-l',
    path.join(dir, 'server.log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    'start',
  ]);
  const url = `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`;
  return {
    url,
    async createDatabase() {
      const name = `test_${randomBytes(6).toString('hex')}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://${USER}:${password}@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await as('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

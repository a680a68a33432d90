/**
 * The vault in a real PostgreSQL server, as every gateway and worker of a deployment share it: each
 * `PgVault` here has its own connection pool, as a separate process would. Single-use things (OAuth
 * state, Connect links) stay single-use when gateways race; a token is refreshed once at the provider
 * when two processes need it at the same moment.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeys } from '../../infra/credentials/keys';
import { loadConfig } from '../../infra/config';
import { PgVault } from '../../infra/credentials/pg-vault';
import { testEnv } from '../helpers/config';
import { CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { startPostgres, type TestPostgres } from '../helpers/postgres';

const ROOT = path.resolve(__dirname, '../..');
const keys = deriveKeys(Buffer.alloc(32, 5));
let server: TestPostgres;
const opened: PgVault[] = [];

const open = (url: string, key = keys.encryption) => {
  const vault = new PgVault(url, key);
  opened.push(vault);
  return vault;
};

async function sql<R extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await Promise.all(opened.map((v) => v.close()));
  await server?.stop();
});

describe('the vault in PostgreSQL', () => {
  it('is configured by DATABASE_URL, which needs the one VAULT_KEY every process shares', () => {
    const key = randomBytes(32).toString('base64');
    expect(
      loadConfig(testEnv({}, { DATABASE_URL: 'postgres://a:b@db:5432/agent', VAULT_KEY: key })).credentials,
    ).toMatchObject({ databaseUrl: 'postgres://a:b@db:5432/agent', vaultKey: key });
    expect(loadConfig(testEnv()).credentials.databaseUrl).toBeUndefined(); // embedded SQLite
    expect(() => loadConfig(testEnv({}, { DATABASE_URL: 'postgres://db/agent' }))).toThrow(/set VAULT_KEY/);
    expect(() => loadConfig(testEnv({}, { DATABASE_URL: 'mysql://db/agent', VAULT_KEY: key }))).toThrow(
      /DATABASE_URL: must be a postgres/,
    );
  });

  it('migrates a fresh database once when several processes open it at the same moment', async () => {
    const url = await server.createDatabase();
    await Promise.all([1, 2, 3, 4, 5].map(() => open(url).ready()));
    expect(await sql(url, 'SELECT version FROM vault_migrations ORDER BY version')).toEqual([
      { version: 1 },
      { version: 2 },
    ]);
    await open(url).ready(); // a restart finds it migrated
    expect(await sql(url, 'SELECT version FROM vault_migrations')).toHaveLength(2);
    // A database of the first version (before push configs) takes only the second migration.
    const older = await server.createDatabase();
    await open(older).ready();
    await sql(older, 'DROP TABLE push_configs');
    await sql(older, 'DELETE FROM vault_migrations WHERE version = 2');
    await open(older).ready();
    expect(await sql(older, 'SELECT count(*)::int AS n FROM push_configs')).toEqual([{ n: 0 }]);
  });

  it('says which database it cannot reach', async () => {
    const vault = open('postgres://agent@127.0.0.1:1/nowhere');
    await expect(vault.ready()).rejects.toThrow(/DATABASE_URL/);
  });

  it('stores secrets encrypted, bound to their row, and decrypts them back in another process', async () => {
    const url = await server.createDatabase();
    const gateway = open(url);
    const worker = open(url);
    await gateway.put(
      'alice',
      'acme',
      { accessToken: 'pg-access-123', refreshToken: 'pg-refresh-456' },
      1_000,
    );
    await gateway.put('bob', 'acme', { accessToken: 'pg-bobs-789' }, null);
    expect(await worker.get('alice', 'acme')).toMatchObject({
      accessToken: 'pg-access-123',
      refreshToken: 'pg-refresh-456',
      expiresAt: 1_000,
    });
    expect(await worker.connected('bob')).toEqual([
      { provider: 'acme', expiresAt: null, updatedAt: expect.any(Number) },
    ]);
    const rows = await sql<{ secret: Buffer }>(url, 'SELECT secret FROM credentials');
    const bytes = Buffer.concat(rows.map((r) => r.secret)).toString('latin1');
    for (const secret of ['pg-access-123', 'pg-refresh-456', 'pg-bobs-789'])
      expect(bytes).not.toContain(secret);
    // Moving alice's ciphertext into bob's row does not give bob alice's token.
    await sql(
      url,
      "UPDATE credentials SET secret = (SELECT secret FROM credentials WHERE user_id = 'alice') WHERE user_id = 'bob'",
    );
    await expect(worker.get('bob', 'acme')).rejects.toThrow();
    await expect(
      open(url, deriveKeys(Buffer.alloc(32, 6)).encryption).get('alice', 'acme'),
    ).rejects.toThrow();
    // A row that does not decrypt is forgotten as it is read (test/infra/unreadable-credentials.test.ts).
    expect(await gateway.has('alice', 'acme')).toBe(false);
    expect(await gateway.has('bob', 'acme')).toBe(false);
  });

  it('keeps A2A push configs sealed, bound to their task and id, at most five a task, for every process', async () => {
    const url = await server.createDatabase();
    const gateway = open(url);
    const worker = open(url);
    const config = (id: string, taskId = 'ctx.msg') => ({
      id,
      taskId,
      userId: 'alice',
      url: `https://hooks.example.com/${id}`,
      token: `push-token-${id}`,
      createdAt: 1_000,
    });
    for (const id of ['a', 'b', 'c', 'd', 'e']) expect(await gateway.savePushConfig(config(id))).toBe(true);
    // A sixth is refused; replacing one of the five is not a sixth.
    expect(await gateway.savePushConfig(config('f'))).toBe(false);
    expect(await gateway.savePushConfig({ ...config('a'), url: 'https://hooks.example.com/a2' })).toBe(true);
    expect(await gateway.savePushConfig(config('x', 'other.task'))).toBe(true);
    const read = await worker.pushConfigs('ctx.msg');
    expect(read.map((c) => [c.id, c.url, c.token])).toEqual([
      ['a', 'https://hooks.example.com/a2', 'push-token-a'],
      ['b', 'https://hooks.example.com/b', 'push-token-b'],
      ['c', 'https://hooks.example.com/c', 'push-token-c'],
      ['d', 'https://hooks.example.com/d', 'push-token-d'],
      ['e', 'https://hooks.example.com/e', 'push-token-e'],
    ]);
    const rows = await sql<{ config: Buffer }>(url, 'SELECT config FROM push_configs');
    const bytes = Buffer.concat(rows.map((r) => r.config)).toString('latin1');
    expect(bytes).not.toContain('push-token-');
    expect(bytes).not.toContain('hooks.example.com');
    // Another task's ciphertext moved into this task's row does not decrypt: that row is dropped, not misread.
    await sql(
      url,
      "UPDATE push_configs SET config = (SELECT config FROM push_configs WHERE task_id = 'other.task') WHERE task_id = 'ctx.msg' AND id = 'b'",
    );
    expect((await worker.pushConfigs('ctx.msg')).map((c) => c.id)).toEqual(['a', 'c', 'd', 'e']);
    expect(await worker.deletePushConfig('ctx.msg', 'a')).toBe(true);
    expect(await gateway.deletePushConfig('ctx.msg', 'a')).toBe(false);
    expect((await gateway.pushConfigs('ctx.msg')).map((c) => c.id)).toEqual(['c', 'd', 'e']);
  });

  it('hands an OAuth flow out once when callbacks race on two gateways, and only to its browser', async () => {
    const url = await server.createDatabase();
    const [one, two] = [open(url), open(url)];
    const flow = {
      id: randomBytes(24).toString('base64url'),
      userId: 'alice',
      provider: 'acme',
      verifier: 'v'.repeat(43),
      browserHash: 'h1',
      expiresAt: Date.now() + 60_000,
    };
    await one.saveFlow(flow);
    expect(await two.consumeFlow(flow.id, 'someone-else')).toEqual({ status: 'other_browser' });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).consumeFlow(flow.id, 'h1')),
    );
    const ok = results.filter((r) => r.status === 'ok');
    expect(ok).toEqual([{ status: 'ok', flow }]);
    expect(results.filter((r) => r.status === 'used')).toHaveLength(9);
    expect(await one.consumeFlow('no-such-flow', 'h1')).toEqual({ status: 'unknown' });
    const stored = await sql<{ verifier: Buffer }>(url, 'SELECT verifier FROM oauth_flows');
    expect(stored[0]!.verifier.toString('latin1')).not.toContain(flow.verifier);
  });

  it('accepts a single-use link once when it is opened on two gateways at the same moment', async () => {
    const url = await server.createDatabase();
    const [one, two] = [open(url), open(url)];
    const nonce = randomBytes(18).toString('base64url');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).consumeTicket(nonce, Date.now() + 60_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await one.consumeTicket(nonce, Date.now() + 60_000)).toBe(false);
    // Expired nonces are cleared; their tickets are refused by their signature's expiry anyway.
    await one.consumeTicket('old', Date.now() - 1);
    await two.consumeTicket('new', Date.now() + 60_000);
    expect(await sql(url, "SELECT nonce FROM used_tickets WHERE nonce = 'old'")).toEqual([]);
  });

  it('keeps the first client registered for an MCP server when two processes register at once', async () => {
    const url = await server.createDatabase();
    const [one, two] = [open(url), open(url)];
    const kept = await Promise.all([
      one.saveRegisteredClient('mcp-files', 'https://as.example', 'https://agent.example/cb', {
        clientId: 'a',
      }),
      two.saveRegisteredClient('mcp-files', 'https://as.example', 'https://agent.example/cb', {
        clientId: 'b',
        clientSecret: 'client-secret-b',
      }),
    ]);
    expect(kept[0]).toEqual(kept[1]);
    expect(await two.registeredClient('mcp-files', 'https://as.example', 'https://agent.example/cb')).toEqual(
      kept[0],
    );
    const rows = await sql<{ client: Buffer }>(url, 'SELECT client FROM oauth_clients');
    expect(rows[0]!.client.toString('latin1')).not.toContain('client-secret-b');
  });

  it('lets one process at a time refresh a credential, and frees it when that process dies', async () => {
    const url = await server.createDatabase();
    const [one, two] = [open(url), open(url)];
    await one.put('alice', 'acme', { accessToken: 'x' }, 0);
    const claim = await one.claimRefresh('alice', 'acme');
    expect(claim).toBeDefined();
    expect(await two.claimRefresh('alice', 'acme')).toBeUndefined();
    await claim!.release();
    const again = await two.claimRefresh('alice', 'acme');
    expect(again).toBeDefined();
    // The holder's connection ends (a killed process): the claim goes with it.
    await sql(
      url,
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()",
    );
    const third = open(url);
    await expect
      .poll(async () => {
        const claimed = await third.claimRefresh('alice', 'acme');
        await claimed?.release();
        return claimed !== undefined;
      })
      .toBe(true);
  });
});

describe('token refresh across processes', () => {
  let provider: TestOAuthProvider;
  let slowToken: Server;
  let slowTokenUrl = '';

  beforeAll(async () => {
    provider = await new TestOAuthProvider().start();
    // The token endpoint answers after a pause, so both processes are inside their refresh at once.
    slowToken = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const upstream = await fetch(`${provider.issuer}/token`, {
          method: 'POST',
          headers: { 'content-type': req.headers['content-type'] ?? 'application/x-www-form-urlencoded' },
          body: Buffer.concat(chunks),
        });
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      })();
    });
    await new Promise<void>((resolve) => slowToken.listen(0, '127.0.0.1', resolve));
    slowTokenUrl = `http://127.0.0.1:${(slowToken.address() as { port: number }).port}/token`;
  });

  afterAll(async () => {
    await provider?.stop();
    slowToken?.closeAllConnections();
    await new Promise<void>((resolve) => (slowToken ? slowToken.close(() => resolve()) : resolve()));
  });

  function refresher(env: Record<string, string>): Promise<{
    child: ChildProcessWithoutNullStreams;
    next: () => Promise<{ ok: boolean; value?: string; message?: string }>;
  }> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test/helpers/refresh-credential.ts')],
      { cwd: ROOT, env: { ...process.env, ...env } },
    );
    const lines: string[] = [];
    const waiting: ((line: string) => void)[] = [];
    let buffer = '';
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        const waiter = waiting.shift();
        if (waiter) waiter(line);
        else lines.push(line);
      }
    });
    const line = () =>
      new Promise<string>((resolve, reject) => {
        const ready = lines.shift();
        if (ready !== undefined) return resolve(ready);
        waiting.push(resolve);
        child.once('exit', (code) => reject(new Error(`refresher exited with ${code}: ${errors}`)));
      });
    return line().then((first) => {
      expect(first).toBe('ready');
      return { child, next: async () => JSON.parse(await line()) as { ok: boolean; value?: string } };
    });
  }

  it('refreshes once at the provider when two processes need the same expiring token at once', async () => {
    const url = await server.createDatabase();
    const vaultKey = randomBytes(32).toString('base64');
    const env = {
      DATABASE_URL: url,
      VAULT_KEY: vaultKey,
      USER_ID: 'alice',
      PROVIDER: 'acme',
      OAUTH_ACME_CLIENT_ID: CLIENT_ID,
      OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
      PROVIDERS: JSON.stringify({
        acme: {
          type: 'oauth2',
          issuer: provider.issuer,
          authorizeUrl: `${provider.issuer}/authorize`,
          tokenUrl: slowTokenUrl,
        },
      }),
    };
    const vault = open(url, deriveKeys(Buffer.from(vaultKey, 'base64')).encryption);
    const processes = await Promise.all([refresher(env), refresher(env)]);
    try {
      for (let round = 1; round <= 5; round++) {
        // Signed in a while ago; the token expires within the refresh margin.
        await vault.put(
          'alice',
          'acme',
          { accessToken: `old-${round}`, refreshToken: `refresh-${round}` },
          Date.now() + 5_000,
        );
        const before = provider.grants.filter((g) => g === 'refresh_token').length;
        for (const p of processes) p.child.stdin.write('go\n');
        const results = await Promise.all(processes.map((p) => p.next()));
        expect(provider.grants.filter((g) => g === 'refresh_token').length - before, `round ${round}`).toBe(
          1,
        );
        expect(results.every((r) => r.ok)).toBe(true);
        expect(results[0]!.value).toMatch(/^Bearer ey/); // the fresh token, not old-<round>
        expect(results[1]!.value).toBe(results[0]!.value);
        expect((await vault.get('alice', 'acme'))!.expiresAt! - Date.now()).toBeGreaterThan(60_000);
      }
    } finally {
      for (const p of processes) p.child.kill('SIGTERM');
    }
  }, 60_000);
});

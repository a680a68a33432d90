/**
 * A stored credential that cannot be decrypted (written with another VAULT_KEY, or corrupted) is reported
 * once, forgotten, and the person is asked to connect again — in the SQLite vault and in PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../infra/credentials/providers';
import { CredentialService } from '../../infra/credentials/service';
import { tempDir } from '../helpers/config';
import { startPostgres, type TestPostgres } from '../helpers/postgres';

const providers: Record<string, Provider> = {
  acme: {
    kind: 'api_key',
    name: 'acme',
    displayName: 'Acme',
    header: 'Authorization',
    prefix: 'Bearer ',
    help: undefined,
    apiHosts: ['api.acme.example'],
  },
};
const newKey = () => randomBytes(32).toString('base64');
const UNREADABLE = {
  ok: false,
  reason: 'unreadable',
  message: 'your stored Acme sign-in could not be read and was removed; connect again',
};

let postgres: TestPostgres;
const services: CredentialService[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
});

afterAll(async () => {
  for (const service of services) await service.close();
  await postgres?.stop();
});

type Store = { name: string; location: () => Promise<{ vaultPath: string; databaseUrl?: string }> };

const stores: Store[] = [
  { name: 'SQLite', location: async () => ({ vaultPath: path.join(tempDir(), 'vault.sqlite') }) },
  {
    name: 'PostgreSQL',
    location: async () => ({
      vaultPath: path.join(tempDir(), 'vault.sqlite'),
      databaseUrl: await postgres.createDatabase(),
    }),
  },
];

function open(where: { vaultPath: string; databaseUrl?: string }, vaultKey: string): CredentialService {
  const service = new CredentialService(providers, { ...where, vaultKey });
  services.push(service);
  return service;
}

describe.each(stores)('an undecryptable credential in $name', ({ location }) => {
  it('written with another VAULT_KEY: told once, removed, then simply not connected', async () => {
    const where = await location();
    const before = open(where, newKey());
    await before.vault.put('alice', 'acme', { accessToken: 'key-from-before' }, null);
    await before.vault.put('bob', 'acme', { accessToken: 'bobs-key' }, null);

    const now = open(where, newKey());
    expect(await now.authorization('alice', 'acme')).toEqual(UNREADABLE);
    expect(await now.vault.has('alice', 'acme')).toBe(false);
    expect(await now.authorization('alice', 'acme')).toMatchObject({ ok: false, reason: 'not_connected' });
    // Only the row that was read is forgotten.
    expect(await before.vault.has('bob', 'acme')).toBe(true);

    // Connecting again works with the key in use now.
    await now.vault.put('alice', 'acme', { accessToken: 'new-key' }, null);
    expect(await now.authorization('alice', 'acme')).toEqual({
      ok: true,
      header: 'Authorization',
      value: 'Bearer new-key',
      token: 'new-key',
    });
  });

  it('disconnects a credential that no longer decrypts', async () => {
    const where = await location();
    await open(where, newKey()).vault.put('alice', 'acme', { accessToken: 'old' }, null);
    const now = open(where, newKey());
    expect(await now.disconnect('alice', 'acme')).toBe(true);
    expect(await now.vault.connected('alice')).toEqual([]);
  });

  it('forgets a registered OAuth client that no longer decrypts, and keeps the next registration', async () => {
    const where = await location();
    await open(where, newKey()).vault.saveRegisteredClient('acme', 'https://as', 'https://gw/cb', {
      clientId: 'old-client',
    });
    const now = open(where, newKey());
    expect(await now.vault.registeredClient('acme', 'https://as', 'https://gw/cb')).toBeUndefined();
    expect(
      await now.vault.saveRegisteredClient('acme', 'https://as', 'https://gw/cb', { clientId: 'new-client' }),
    ).toEqual({ clientId: 'new-client' });
  });
});

describe('a corrupted credential row', () => {
  it('is told once and removed (SQLite)', async () => {
    const where = { vaultPath: path.join(tempDir(), 'vault.sqlite') };
    const key = newKey();
    const service = open(where, key);
    await service.vault.put('alice', 'acme', { accessToken: 'secret' }, null);
    const db = new DatabaseSync(where.vaultPath);
    db.prepare(
      "UPDATE credentials SET secret = X'00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'",
    ).run();
    db.close();
    expect(await service.authorization('alice', 'acme')).toEqual(UNREADABLE);
    expect(await service.authorization('alice', 'acme')).toMatchObject({ reason: 'not_connected' });
  });

  it('is told once and removed (PostgreSQL)', async () => {
    const databaseUrl = await postgres.createDatabase();
    const service = open({ vaultPath: path.join(tempDir(), 'vault.sqlite'), databaseUrl }, newKey());
    await service.vault.put('alice', 'acme', { accessToken: 'secret' }, null);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(
      'UPDATE credentials SET secret = set_byte(secret, 40, (get_byte(secret, 40) + 1) % 256)',
    );
    await client.end();
    expect(await service.authorization('alice', 'acme')).toEqual(UNREADABLE);
    expect(await service.authorization('alice', 'acme')).toMatchObject({ reason: 'not_connected' });
  });
});

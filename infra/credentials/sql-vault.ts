/**
 * The vault's one core, over a small SQL adapter: what is stored, sealed and claimed, written once for both stores.
 * An adapter (`sqlite-vault.ts`, `pg-vault.ts`) owns only what differs between them: its schema, how a statement
 * runs, and how one refresh at a time is held (a lease column in SQLite, an advisory lock in PostgreSQL).
 * Statements here use `?` placeholders and SQL both databases speak (ON CONFLICT, RETURNING).
 */
import {
  FLOW_RETENTION_MS,
  VaultCipher,
  type ConsumedFlow,
  type Credential,
  type OAuthFlow,
  type PushConfig,
  MAX_PUSH_CONFIGS,
  type RefreshClaim,
  type RegisteredClient,
  type StoredSecret,
  type Vault,
  UnreadableCredential,
} from './vault';

export type SqlValue = string | number | null | Uint8Array;

/** What a store adapter gives the core. */
export interface SqlStore {
  /** Resolves once the schema is in place; rejects with why the store cannot be used. */
  ready(): Promise<void>;
  /** One statement with `?` placeholders: the rows it returned (SELECT, RETURNING) and how many rows it changed. */
  query<R>(sql: string, params: SqlValue[]): Promise<{ rows: R[]; changed: number }>;
  /** One refresher at a time per credential, across processes. */
  claimRefresh(userId: string, provider: string): Promise<RefreshClaim | undefined>;
  close(): Promise<void>;
}

/** PostgreSQL's BIGINT arrives as a string (it may exceed 2^53); epoch milliseconds never do. */
const ms = (value: string | number | null): number | null => (value === null ? null : Number(value));

export class SqlVault implements Vault {
  private readonly cipher: VaultCipher;

  constructor(
    private readonly store: SqlStore,
    key: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.cipher = new VaultCipher(key);
  }

  ready(): Promise<void> {
    return this.store.ready();
  }

  private async query<R>(sql: string, params: SqlValue[]): Promise<{ rows: R[]; changed: number }> {
    await this.store.ready();
    return await this.store.query<R>(sql, params);
  }

  async put(userId: string, provider: string, secret: StoredSecret, expiresAt: number | null): Promise<void> {
    await this.query(
      `INSERT INTO credentials (user_id, provider, secret, expires_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id, provider) DO UPDATE SET secret = excluded.secret, expires_at = excluded.expires_at,
         updated_at = excluded.updated_at`,
      [
        userId,
        provider,
        this.cipher.seal(JSON.stringify(secret), VaultCipher.credentialContext(userId, provider)),
        expiresAt,
        this.now(),
      ],
    );
  }

  async get(userId: string, provider: string): Promise<Credential | undefined> {
    const { rows } = await this.query<{
      secret: Uint8Array;
      expires_at: string | number | null;
      updated_at: string | number;
    }>('SELECT secret, expires_at, updated_at FROM credentials WHERE user_id = ? AND provider = ?', [
      userId,
      provider,
    ]);
    const row = rows[0];
    if (!row) return undefined;
    const secret = this.cipher.openJson<StoredSecret>(
      row.secret,
      VaultCipher.credentialContext(userId, provider),
    );
    if (!secret) {
      // Only this unreadable row: a sign-in that replaced it meanwhile stays.
      await this.query('DELETE FROM credentials WHERE user_id = ? AND provider = ? AND secret = ?', [
        userId,
        provider,
        row.secret,
      ]);
      throw new UnreadableCredential(userId, provider, { cause: 'decryption failed' });
    }
    return { ...secret, userId, provider, expiresAt: ms(row.expires_at), updatedAt: ms(row.updated_at)! };
  }

  async has(userId: string, provider: string): Promise<boolean> {
    const { rows } = await this.query('SELECT 1 FROM credentials WHERE user_id = ? AND provider = ?', [
      userId,
      provider,
    ]);
    return rows.length === 1;
  }

  async delete(userId: string, provider: string): Promise<boolean> {
    const { changed } = await this.query('DELETE FROM credentials WHERE user_id = ? AND provider = ?', [
      userId,
      provider,
    ]);
    return changed > 0;
  }

  async connected(
    userId: string,
  ): Promise<{ provider: string; expiresAt: number | null; updatedAt: number }[]> {
    const { rows } = await this.query<{
      provider: string;
      expires_at: string | number | null;
      updated_at: string | number;
    }>('SELECT provider, expires_at, updated_at FROM credentials WHERE user_id = ? ORDER BY provider', [
      userId,
    ]);
    return rows.map((r) => ({
      provider: r.provider,
      expiresAt: ms(r.expires_at),
      updatedAt: ms(r.updated_at)!,
    }));
  }

  async claimRefresh(userId: string, provider: string): Promise<RefreshClaim | undefined> {
    await this.store.ready();
    return await this.store.claimRefresh(userId, provider);
  }

  async consumeTicket(nonce: string, expiresAt: number): Promise<boolean> {
    await this.query('DELETE FROM used_tickets WHERE expires_at < ?', [this.now()]);
    const { changed } = await this.query(
      'INSERT INTO used_tickets (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING',
      [nonce, expiresAt],
    );
    return changed === 1;
  }

  async saveFlow(flow: OAuthFlow): Promise<void> {
    await this.query(
      'INSERT INTO oauth_flows (id, user_id, provider, verifier, browser_hash, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      [
        flow.id,
        flow.userId,
        flow.provider,
        this.cipher.seal(flow.verifier, VaultCipher.flowContext(flow.id)),
        flow.browserHash,
        flow.expiresAt,
      ],
    );
    await this.query('DELETE FROM oauth_flows WHERE expires_at < ?', [this.now() - FLOW_RETENTION_MS]);
  }

  async consumeFlow(id: string, browserHash: string): Promise<ConsumedFlow> {
    // One statement claims it: of two callbacks racing (on two gateways), exactly one gets the row back.
    const { rows } = await this.query<{
      user_id: string;
      provider: string;
      verifier: Uint8Array;
      expires_at: string | number;
    }>(
      `UPDATE oauth_flows SET used_at = ? WHERE id = ? AND used_at IS NULL AND browser_hash = ?
       RETURNING user_id, provider, verifier, expires_at`,
      [this.now(), id, browserHash],
    );
    const row = rows[0];
    if (row)
      return {
        status: 'ok',
        flow: {
          id,
          userId: row.user_id,
          provider: row.provider,
          verifier: this.cipher.open(row.verifier, VaultCipher.flowContext(id)),
          browserHash,
          expiresAt: ms(row.expires_at)!,
        },
      };
    const seen = await this.query<{ used_at: string | number | null }>(
      'SELECT used_at FROM oauth_flows WHERE id = ?',
      [id],
    );
    if (!seen.rows[0]) return { status: 'unknown' };
    return { status: seen.rows[0].used_at !== null ? 'used' : 'other_browser' };
  }

  async registeredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
  ): Promise<RegisteredClient | undefined> {
    const { rows } = await this.query<{ client: Uint8Array }>(
      'SELECT client FROM oauth_clients WHERE provider = ? AND authorization_server = ? AND redirect_uri = ?',
      [provider, authorizationServer, redirectUri],
    );
    if (!rows[0]) return undefined;
    const client = this.cipher.openJson<RegisteredClient>(
      rows[0].client,
      VaultCipher.clientContext(provider, authorizationServer, redirectUri),
    );
    // One that does not decrypt is forgotten: the next sign-in registers again.
    if (!client)
      await this.query(
        'DELETE FROM oauth_clients WHERE provider = ? AND authorization_server = ? AND redirect_uri = ? AND client = ?',
        [provider, authorizationServer, redirectUri, rows[0].client],
      );
    return client;
  }

  async saveRegisteredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
    client: RegisteredClient,
  ): Promise<RegisteredClient> {
    return (
      (await this.insertClient(provider, authorizationServer, redirectUri, client)) ??
      // The one stored before did not decrypt and was just removed: this one takes its place.
      (await this.insertClient(provider, authorizationServer, redirectUri, client))!
    );
  }

  private async insertClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
    client: RegisteredClient,
  ): Promise<RegisteredClient | undefined> {
    await this.query(
      `INSERT INTO oauth_clients (provider, authorization_server, redirect_uri, client, created_at)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [
        provider,
        authorizationServer,
        redirectUri,
        this.cipher.seal(
          JSON.stringify(client),
          VaultCipher.clientContext(provider, authorizationServer, redirectUri),
        ),
        this.now(),
      ],
    );
    return await this.registeredClient(provider, authorizationServer, redirectUri);
  }

  async savePushConfig(config: PushConfig): Promise<boolean> {
    const { userId, taskId, id, createdAt, ...secret } = config;
    const { rows } = await this.query<{ id: string }>('SELECT id FROM push_configs WHERE task_id = ?', [
      taskId,
    ]);
    if (!rows.some((r) => r.id === id) && rows.length >= MAX_PUSH_CONFIGS) return false;
    await this.query(
      `INSERT INTO push_configs (task_id, id, user_id, config, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (task_id, id) DO UPDATE SET config = excluded.config
       WHERE push_configs.user_id = excluded.user_id`,
      [
        taskId,
        id,
        userId,
        this.cipher.seal(JSON.stringify(secret), VaultCipher.pushContext(taskId, id, userId)),
        createdAt,
      ],
    );
    // Another person's config under that id stays theirs (two people saving one id at once): not saved.
    const { rows: kept } = await this.query<{ user_id: string }>(
      'SELECT user_id FROM push_configs WHERE task_id = ? AND id = ?',
      [taskId, id],
    );
    return kept[0]?.user_id === userId;
  }

  async pushConfigs(taskId: string): Promise<PushConfig[]> {
    const { rows } = await this.query<{
      id: string;
      user_id: string;
      config: Uint8Array;
      created_at: string | number;
    }>('SELECT id, user_id, config, created_at FROM push_configs WHERE task_id = ? ORDER BY created_at, id', [
      taskId,
    ]);
    const configs: PushConfig[] = [];
    for (const row of rows) {
      const secret = this.cipher.openJson<Omit<PushConfig, 'id' | 'taskId' | 'userId' | 'createdAt'>>(
        row.config,
        VaultCipher.pushContext(taskId, row.id, row.user_id),
      );
      if (!secret) {
        await this.deletePushConfig(taskId, row.id);
        continue;
      }
      configs.push({ ...secret, id: row.id, taskId, userId: row.user_id, createdAt: ms(row.created_at)! });
    }
    return configs;
  }

  async deletePushConfig(taskId: string, id: string): Promise<boolean> {
    const { changed } = await this.query('DELETE FROM push_configs WHERE task_id = ? AND id = ?', [
      taskId,
      id,
    ]);
    return changed > 0;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/**
 * The credential vault: per (user, provider) secrets encrypted with AES-256-GCM (authenticated; the row's
 * user and provider are bound in as associated data, so a ciphertext moved to another row does not
 * decrypt). Also holds the short-lived OAuth flows (PKCE verifier, encrypted; single-use), the used
 * single-use link nonces and the OAuth clients registered dynamically for MCP servers. Shared by the
 * gateway (writes after sign-in) and the worker (reads, refreshes before use, one refresh at a time).
 * One core implements it (`sql-vault.ts`) over two stores: embedded SQLite (one machine, `sqlite-vault.ts`) and
 * PostgreSQL (every gateway and worker of a deployment, `pg-vault.ts`).
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

export interface StoredSecret {
  /** OAuth access token, or the API key. */
  accessToken: string;
  refreshToken?: string;
  tokenType?: string;
  scope?: string;
  /**
   * Scopes a tool server asked for beyond this token's (MCP scope step-up): the next sign-in asks for them too, and
   * its tokens replace this record (and this field) as a whole.
   */
  wantScope?: string;
}

export interface Credential extends StoredSecret {
  userId: string;
  provider: string;
  /** Epoch ms; null when the secret does not expire (API keys, tokens without expires_in). */
  expiresAt: number | null;
  updatedAt: number;
}

export interface OAuthFlow {
  id: string;
  userId: string;
  provider: string;
  verifier: string;
  browserHash: string;
  expiresAt: number;
}

export interface RegisteredClient {
  clientId: string;
  /** Only when the authorization server issued one (confidential client); encrypted like every secret. */
  clientSecret?: string;
}

/**
 * Where an A2A client wants a task's changes pushed (A2A push notifications), with the token or credentials it
 * gave for them: kept here, sealed, never in a workflow's history. The session workflow knows only the task's id.
 */
export interface PushConfig {
  id: string;
  taskId: string;
  /** Who set it: pushes carry the task as this person reads it, and only they read or remove it. */
  userId: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials: string };
  createdAt: number;
}

export type ConsumedFlow =
  { status: 'ok'; flow: OAuthFlow } | { status: 'unknown' | 'used' | 'other_browser' };

/** The right to refresh one credential, held until released (or until its holder dies). */
export interface RefreshClaim {
  release(): Promise<void>;
}

export interface Vault {
  /** Resolves once the store is open (and, for PostgreSQL, migrated); rejects with why it cannot be. */
  ready(): Promise<void>;
  put(userId: string, provider: string, secret: StoredSecret, expiresAt: number | null): Promise<void>;
  get(userId: string, provider: string): Promise<Credential | undefined>;
  has(userId: string, provider: string): Promise<boolean>;
  delete(userId: string, provider: string): Promise<boolean>;
  /** Providers a user has connected (no secrets). */
  connected(userId: string): Promise<{ provider: string; expiresAt: number | null; updatedAt: number }[]>;
  /** Claims the right to refresh this credential: one refresher at a time across processes. */
  claimRefresh(userId: string, provider: string): Promise<RefreshClaim | undefined>;
  /** Marks a single-use link's nonce used: true the first time, false ever after (until it expires). */
  consumeTicket(nonce: string, expiresAt: number): Promise<boolean>;
  saveFlow(flow: OAuthFlow): Promise<void>;
  /**
   * Marks a flow used and returns it, exactly once, and only to the browser that started it: a callback
   * from another browser leaves the flow untouched (so the rightful one still completes), a replayed
   * callback finds it used.
   */
  consumeFlow(id: string, browserHash: string): Promise<ConsumedFlow>;
  /**
   * A client registered dynamically (RFC 7591) for one provider, authorization server and redirect URI.
   * Every process shares it: the gateway registers once, the worker refreshes tokens with the same client.
   */
  registeredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
  ): Promise<RegisteredClient | undefined>;
  /** Keeps the first registration when two processes register at once; returns the one kept. */
  saveRegisteredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
    client: RegisteredClient,
  ): Promise<RegisteredClient>;
  /** Adds or replaces (same task and id) a push config; false when the task has MAX_PUSH_CONFIGS others. */
  savePushConfig(config: PushConfig): Promise<boolean>;
  /** A task's push configs, oldest first (those that do not decrypt are removed and left out). */
  pushConfigs(taskId: string): Promise<PushConfig[]>;
  deletePushConfig(taskId: string, id: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Push configs one task may have: a few receivers, not a fan-out. */
export const MAX_PUSH_CONFIGS = 5;

/**
 * A stored credential that does not decrypt (written with another VAULT_KEY, or corrupted). The store has
 * already removed it, so this is seen once; the person connects again.
 */
export class UnreadableCredential extends Error {
  constructor(
    readonly userId: string,
    readonly provider: string,
    options: { cause: unknown },
  ) {
    super(`the stored ${provider} credential of ${userId} could not be decrypted and was removed`, options);
    this.name = 'UnreadableCredential';
  }
}

/** Old OAuth flows are of no use to anyone: deleted a day after they expire. */
export const FLOW_RETENTION_MS = 24 * 3_600_000;

/** AES-GCM's full tag: shorter ones are refused, never accepted as a weaker check. */
export const GCM_TAG_BYTES = 16;

/** Row-level encryption, the same for both stores; `context` is the row's identity (associated data). */
export class VaultCipher {
  /** Imported once: a raw Buffer key is re-validated and wrapped on every cipher (~3x the cost of a seal). */
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    this.key = createSecretKey(key);
  }

  seal(plain: string, context: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: GCM_TAG_BYTES });
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** The sealed JSON, parsed; undefined when it does not decrypt or parse (another key, corruption). */
  openJson<T>(sealed: Uint8Array, context: string): T | undefined {
    try {
      return JSON.parse(this.open(sealed, context)) as T;
    } catch {
      return undefined;
    }
  }

  open(sealed: Uint8Array, context: string): string {
    const data = Buffer.from(sealed);
    if (data.length < 12 + GCM_TAG_BYTES) throw new Error('sealed data too short to hold its IV and tag');
    // The tag's length is fixed: GCM would otherwise accept a 4-byte tag, which can be forged by trying.
    const decipher = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, 12), {
      authTagLength: GCM_TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(data.subarray(12, 28));
    return Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]).toString('utf8');
  }

  static credentialContext = (userId: string, provider: string) => `${userId}\n${provider}`;
  static flowContext = (id: string) => `flow\n${id}`;
  static pushContext = (taskId: string, id: string, userId: string) => `push\n${taskId}\n${id}\n${userId}`;
  static clientContext = (provider: string, authorizationServer: string, redirectUri: string) =>
    `client\n${provider}\n${authorizationServer}\n${redirectUri}`;
}

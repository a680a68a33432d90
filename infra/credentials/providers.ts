/**
 * Credential providers from configuration: OAuth 2.0 (authorization code + PKCE) and API keys. Declared in
 * the policy file under `providers`; client ids may be written there, client secrets only in the
 * environment (`OAUTH_<NAME>_CLIENT_ID`, `OAUTH_<NAME>_CLIENT_SECRET`). Presets fill in well-known URLs.
 */
import { z } from 'zod';
import { providerNameSchema } from '../../common/ids';

export { providerNameSchema };

/**
 * Where a tool (http_request) may send the provider's credential: host names, `*.` wildcards for
 * subdomains, addresses or CIDRs, optionally with a port (`api.example.com`, `*.example.com:8443`).
 */
const apiHostsSchema = z.array(z.string().min(1).max(300)).max(50);

const oauthFields = {
  displayName: z.string().min(1).max(60).optional(),
  /** OpenID Connect / RFC 8414 issuer: endpoints are discovered from it. */
  issuer: z.url().optional(),
  authorizeUrl: z.url().optional(),
  tokenUrl: z.url().optional(),
  revokeUrl: z.url().optional(),
  clientId: z.string().min(1).max(300).optional(),
  scopes: z.array(z.string().min(1).max(200)).max(50).optional(),
  pkce: z.boolean().optional(),
  /** Extra authorization request parameters, e.g. {"access_type": "offline"}. */
  extraParams: z.record(z.string(), z.string()).optional(),
  apiHosts: apiHostsSchema.optional(),
};

export const providerConfigSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('oauth2'),
    preset: z.enum(['github', 'google', 'gitlab', 'atlassian']).optional(),
    ...oauthFields,
  }),
  z.strictObject({
    type: z.literal('api_key'),
    displayName: z.string().min(1).max(60).optional(),
    /** The request header carrying the key; `Authorization` by default. */
    header: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/)
      .default('Authorization'),
    /** Put before the key in that header; `Bearer ` by default for Authorization, nothing otherwise. */
    prefix: z.string().max(30).optional(),
    /** Shown on the entry form: where to find the key. */
    help: z.string().max(500).optional(),
    apiHosts: apiHostsSchema.optional(),
  }),
]);
export type ProviderConfig = z.infer<typeof providerConfigSchema>;

export const providersSchema = z.record(providerNameSchema, providerConfigSchema).default({});

const PRESETS: Record<string, Partial<z.infer<z.ZodObject<typeof oauthFields>>>> = {
  github: {
    displayName: 'GitHub',
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    scopes: ['repo', 'read:user'],
    pkce: true,
    apiHosts: ['api.github.com', 'uploads.github.com'],
  },
  google: {
    displayName: 'Google',
    issuer: 'https://accounts.google.com',
    scopes: ['openid', 'email'],
    pkce: true,
    extraParams: { access_type: 'offline', prompt: 'consent' },
    apiHosts: ['*.googleapis.com'],
  },
  gitlab: {
    displayName: 'GitLab',
    authorizeUrl: 'https://gitlab.com/oauth/authorize',
    tokenUrl: 'https://gitlab.com/oauth/token',
    scopes: ['read_api'],
    pkce: true,
    apiHosts: ['gitlab.com'],
  },
  atlassian: {
    displayName: 'Atlassian',
    authorizeUrl: 'https://auth.atlassian.com/authorize',
    tokenUrl: 'https://auth.atlassian.com/oauth/token',
    scopes: ['read:jira-work', 'offline_access'],
    pkce: true,
    extraParams: { audience: 'api.atlassian.com', prompt: 'consent' },
    apiHosts: ['api.atlassian.com', '*.atlassian.net'],
  },
};

export interface OAuthProvider {
  kind: 'oauth2';
  name: string;
  displayName: string;
  issuer: string | undefined;
  authorizeUrl: string | undefined;
  tokenUrl: string | undefined;
  revokeUrl: string | undefined;
  /** Undefined only for an MCP server whose authorization server registers clients dynamically. */
  clientId: string | undefined;
  /** Read from the environment; never logged, never in history. */
  clientSecret: string | undefined;
  scopes: string[];
  pkce: boolean;
  extraParams: Record<string, string>;
  /** Hosts a tool may send this provider's token to; empty: never sent by http_request. */
  apiHosts: string[];
  /**
   * For an MCP server's own sign-in: endpoints come from its protected-resource metadata (RFC 9728) and
   * its authorization server's metadata, a client is registered dynamically (RFC 7591) when none is
   * configured, and tokens are requested for this resource (RFC 8707).
   */
  mcpServerUrl?: string;
}

export interface ApiKeyProvider {
  kind: 'api_key';
  name: string;
  displayName: string;
  header: string;
  prefix: string;
  help: string | undefined;
  /** Hosts a tool may send this provider's key to; empty: never sent by http_request. */
  apiHosts: string[];
}

export type Provider = OAuthProvider | ApiKeyProvider;

/** The environment variable holding a provider's client id or secret: `OAUTH_<NAME>_<SUFFIX>`. */
export const envName = (name: string, suffix: 'CLIENT_ID' | 'CLIENT_SECRET') =>
  `OAUTH_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${suffix}`;
const title = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** Resolves presets and environment secrets; a provider that cannot work is a configuration error. */
export function resolveProviders(
  configured: Record<string, ProviderConfig>,
  env: NodeJS.ProcessEnv,
): Record<string, Provider> {
  const providers: Record<string, Provider> = {};
  for (const [name, config] of Object.entries(configured)) {
    if (config.type === 'api_key') {
      providers[name] = {
        kind: 'api_key',
        name,
        displayName: config.displayName ?? title(name),
        header: config.header,
        prefix: config.prefix ?? (config.header.toLowerCase() === 'authorization' ? 'Bearer ' : ''),
        help: config.help,
        apiHosts: config.apiHosts ?? [],
      };
      continue;
    }
    const merged = { ...(config.preset ? PRESETS[config.preset] : {}), ...stripUndefined(config) };
    const clientId = env[envName(name, 'CLIENT_ID')]?.trim() || merged.clientId;
    if (!clientId)
      throw new Error(
        `provider "${name}": set ${envName(name, 'CLIENT_ID')} (or "clientId" in the policy file)`,
      );
    if (!merged.issuer && !(merged.authorizeUrl && merged.tokenUrl))
      throw new Error(`provider "${name}": set "issuer" (discovery) or both "authorizeUrl" and "tokenUrl"`);
    providers[name] = {
      kind: 'oauth2',
      name,
      displayName: merged.displayName ?? title(name),
      issuer: merged.issuer,
      authorizeUrl: merged.authorizeUrl,
      tokenUrl: merged.tokenUrl,
      revokeUrl: merged.revokeUrl,
      clientId,
      clientSecret: env[envName(name, 'CLIENT_SECRET')]?.trim() || undefined,
      scopes: merged.scopes ?? [],
      pkce: merged.pkce ?? true,
      extraParams: merged.extraParams ?? {},
      apiHosts: merged.apiHosts ?? [],
    };
  }
  return providers;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The provider an MCP server that signs in on its own is reached through: `mcp-<server>`. */
export const mcpProviderName = (server: string) => `mcp-${server}`;

/**
 * One OAuth provider per remote MCP server not tied to a configured provider (`auth`), discovered the
 * MCP way when the server first asks for a sign-in (a 401). A client id is optional (dynamic client
 * registration); a client secret, when the server's authorization server wants one, comes from the
 * environment like any other (`OAUTH_MCP_<SERVER>_CLIENT_SECRET`).
 */
export function resolveMcpProviders(
  servers: Record<
    string,
    { url?: string; auth?: string; oauth?: { clientId?: string; scopes?: string[]; displayName?: string } }
  >,
  env: NodeJS.ProcessEnv,
  configured: Record<string, Provider>,
): Record<string, Provider> {
  const providers: Record<string, Provider> = {};
  for (const [server, config] of Object.entries(servers)) {
    if (!config.url || config.auth) continue;
    const name = mcpProviderName(server);
    if (Object.hasOwn(configured, name))
      throw new Error(`provider "${name}" is reserved for the MCP server "${server}"; rename the provider`);
    if (!providerNameSchema.safeParse(name).success)
      throw new Error(`MCP server "${server}": a remote server's name is at most 28 characters`);
    providers[name] = {
      kind: 'oauth2',
      name,
      displayName: config.oauth?.displayName ?? `${title(server)} (MCP)`,
      issuer: undefined,
      authorizeUrl: undefined,
      tokenUrl: undefined,
      revokeUrl: undefined,
      clientId: env[envName(name, 'CLIENT_ID')]?.trim() || config.oauth?.clientId,
      clientSecret: env[envName(name, 'CLIENT_SECRET')]?.trim() || undefined,
      scopes: config.oauth?.scopes ?? [],
      pkce: true,
      extraParams: {},
      apiHosts: [],
      mcpServerUrl: config.url,
    };
  }
  return providers;
}

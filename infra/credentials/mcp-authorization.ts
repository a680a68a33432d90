/**
 * MCP authorization discovery (the MCP spec's "Authorization" section), with the official SDK's helpers:
 * the server's 401 challenge names its protected-resource metadata (RFC 9728; well-known locations as the
 * fallback), which names the authorization server, whose metadata (RFC 8414 or OpenID discovery) gives
 * the endpoints. Without a configured client id, a client is registered dynamically (RFC 7591) once and
 * kept in the vault for every process. Tokens are requested for the server as the resource (RFC 8707).
 */
import type * as McpAuth from '@modelcontextprotocol/sdk/client/auth.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { envName, type OAuthProvider } from './providers';
import type { RegisteredClient, Vault } from './vault';

const PROBE_TIMEOUT_MS = 10_000;

/** The SDK's auth helpers, loaded on first use: they take 0.15 s of every worker's and gateway's start otherwise. */
const mcpAuth = (): Promise<typeof McpAuth> => import('@modelcontextprotocol/sdk/client/auth.js');

export interface McpAuthorization {
  metadata: AuthorizationServerMetadata;
  client: RegisteredClient;
  /** The resource indicator to send with every authorization and token request. */
  resource: string | undefined;
  /** Scopes to ask for: configured, else the server's challenge, else its metadata's list. */
  scopes: string[];
}

/** Why discovery failed, in words for the person and the operator; never a secret. */
export class McpAuthorizationError extends Error {}

/**
 * A 403 that asks for more scopes (`WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`, MCP's scope
 * step-up): the scopes it asks for; undefined for any other answer.
 */
export async function insufficientScopeOf(response: Response): Promise<string[] | undefined> {
  if (response.status !== 403) return undefined;
  const { error, scope } = (await mcpAuth()).extractWWWAuthenticateParams(response);
  return error === 'insufficient_scope' ? (scope ?? '').split(' ').filter(Boolean) : undefined;
}

/** What the server says when asked without a token: where its metadata is, and which scope it wants. */
async function probeChallenge(serverUrl: string): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const response = await fetch(serverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  await response.body?.cancel();
  return response.status === 401 ? (await mcpAuth()).extractWWWAuthenticateParams(response) : {};
}

export async function discoverMcpAuthorization(
  provider: OAuthProvider,
  options: { redirectUri: string | undefined; vault: Vault },
): Promise<McpAuthorization> {
  const serverUrl = provider.mcpServerUrl!;
  const challenge = await probeChallenge(serverUrl).catch((error: unknown) => {
    throw new McpAuthorizationError(`the server cannot be reached (${(error as Error).message})`);
  });
  const info = await (
    await mcpAuth()
  )
    .discoverOAuthServerInfo(serverUrl, {
      ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
    })
    .catch((error: unknown) => {
      throw new McpAuthorizationError(
        `its authorization metadata cannot be read (${(error as Error).message})`,
      );
    });
  // No metadata anywhere: a server of the 2025-03-26 specification, whose authorization endpoints are its own
  // origin's default paths (that version's fallback; PKCE is still sent). Newer servers always publish metadata.
  const metadata =
    info.authorizationServerMetadata ?? (info.resourceMetadata ? undefined : defaultEndpoints(serverUrl));
  if (!metadata)
    throw new McpAuthorizationError(
      `no authorization server metadata was found at ${info.authorizationServerUrl}`,
    );
  // OAuth 2.1: no sign-in without PKCE S256, and the metadata must say the server supports it.
  if (!metadata.code_challenge_methods_supported?.includes('S256'))
    throw new McpAuthorizationError('its authorization server does not support PKCE (S256)');

  const declared = info.resourceMetadata?.resource;
  if (
    declared !== undefined &&
    !checkResourceAllowed({ requestedResource: serverUrl, configuredResource: declared })
  )
    throw new McpAuthorizationError(`its metadata is for another resource (${declared})`);

  const scopes = provider.scopes.length
    ? provider.scopes
    : (challenge.scope?.split(' ').filter(Boolean) ?? info.resourceMetadata?.scopes_supported ?? []);
  return {
    metadata,
    client: await clientFor(provider, metadata, scopes, options),
    resource: declared,
    scopes,
  };
}

/** The 2025-03-26 specification's default endpoints: /authorize, /token and /register at the server's origin. */
function defaultEndpoints(serverUrl: string): AuthorizationServerMetadata {
  const origin = new URL(serverUrl).origin;
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
  } as AuthorizationServerMetadata;
}

async function clientFor(
  provider: OAuthProvider,
  metadata: AuthorizationServerMetadata,
  scopes: string[],
  options: { redirectUri: string | undefined; vault: Vault },
): Promise<RegisteredClient> {
  if (provider.clientId)
    return {
      clientId: provider.clientId,
      ...(provider.clientSecret ? { clientSecret: provider.clientSecret } : {}),
    };
  if (!options.redirectUri) throw new McpAuthorizationError('PUBLIC_URL is needed to register a client');
  const issuer = metadata.issuer;
  const kept = await options.vault.registeredClient(provider.name, issuer, options.redirectUri);
  if (kept) return kept;
  if (!metadata.registration_endpoint)
    throw new McpAuthorizationError(
      `its authorization server does not register clients dynamically: register one there and set "oauth": {"clientId": …} for this server (secret in ${envName(provider.name, 'CLIENT_SECRET')})`,
    );
  const registered = await (
    await mcpAuth()
  )
    .registerClient(issuer, {
      metadata,
      clientMetadata: {
        client_name: 'Durable agent runtime',
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        ...(scopes.length ? { scope: scopes.join(' ') } : {}),
      },
    })
    .catch((error: unknown) => {
      throw new McpAuthorizationError(
        `client registration was refused (${(error as Error).message.slice(0, 200)})`,
      );
    });
  return await options.vault.saveRegisteredClient(provider.name, issuer, options.redirectUri, {
    clientId: registered.client_id,
    ...(registered.client_secret ? { clientSecret: registered.client_secret } : {}),
  });
}

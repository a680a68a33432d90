/**
 * OAuth 2.0 with openid-client: the authorization URL (state + PKCE S256), the code exchange, refresh and
 * revocation. Endpoints come from the provider's configuration, from discovery of its issuer, or (for an
 * MCP server's own sign-in) from MCP authorization discovery. Plain HTTP is allowed only for loopback
 * addresses (local development and tests).
 */
import type { SignInClaims } from '../../common/sign-in-rule';
import * as oidc from 'openid-client';
import { discoverMcpAuthorization } from './mcp-authorization';
import type { OAuthProvider } from './providers';
import type { Vault } from './vault';

export interface TokenResult {
  accessToken: string;
  refreshToken: string | undefined;
  tokenType: string | undefined;
  scope: string | undefined;
  /** Epoch ms, or null when the provider gave no expiry. */
  expiresAt: number | null;
}

const isLoopback = (url: string) => ['localhost', '127.0.0.1', '[::1]'].includes(new URL(url).hostname);

/** A provider's endpoints and client, plus what every request to it carries. */
interface Loaded {
  config: oidc.Configuration;
  scopes: string[];
  /** RFC 8707 resource indicator (MCP servers), sent with authorization and token requests. */
  resource: Record<string, string>;
}

/**
 * `client_secret_basic`, encoding the id and secret as RFC 6749 §2.3.1 asks but leaving unreserved characters as they
 * are (`-`, `.`, `_`, `~`): servers that do not decode them still take `my-client`, and those that do get the same.
 */
function basicAuth(clientId: string, secret: string): oidc.ClientAuth {
  const credentials = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString(
    'base64',
  );
  return (_as, _client, _body, headers) => headers.set('authorization', `Basic ${credentials}`);
}

export class OAuthClient {
  private loaded: Promise<Loaded> | undefined;

  constructor(
    readonly provider: OAuthProvider,
    /** Where dynamically registered clients are kept, and the callback they are registered with. */
    private readonly registration?: { vault: Vault; redirectUri: string | undefined },
  ) {}

  private config(): Promise<Loaded> {
    this.loaded ??= this.load().catch((error: unknown) => {
      this.loaded = undefined; // a provider down at start must not be remembered as broken
      throw error;
    });
    return this.loaded;
  }

  private async load(): Promise<Loaded> {
    const p = this.provider;
    const authFor = (secret: string | undefined) => (secret ? oidc.ClientSecretPost(secret) : oidc.None());
    if (p.mcpServerUrl) {
      if (!this.registration) throw new Error('MCP sign-in needs the vault');
      const found = await discoverMcpAuthorization(p, this.registration);
      // A client secret goes in the body, unless the server takes it only as HTTP Basic (what it lists decides).
      const methods = (found.metadata as { token_endpoint_auth_methods_supported?: unknown })
        .token_endpoint_auth_methods_supported;
      const basicOnly =
        Array.isArray(methods) &&
        methods.includes('client_secret_basic') &&
        !methods.includes('client_secret_post');
      const secret = found.client.clientSecret;
      const config = new oidc.Configuration(
        found.metadata as oidc.ServerMetadata,
        found.client.clientId,
        undefined,
        secret && basicOnly ? basicAuth(found.client.clientId, secret) : authFor(secret),
      );
      if ([p.mcpServerUrl, found.metadata.token_endpoint].some(isLoopback))
        oidc.allowInsecureRequests(config);
      return { config, scopes: found.scopes, resource: found.resource ? { resource: found.resource } : {} };
    }
    const auth = authFor(p.clientSecret);
    const insecure = [p.issuer, p.authorizeUrl, p.tokenUrl].some((u) => u && isLoopback(u));
    if (p.issuer && !p.authorizeUrl) {
      const config = await oidc.discovery(new URL(p.issuer), p.clientId!, undefined, auth, {
        execute: insecure ? [oidc.allowInsecureRequests] : [],
      });
      return { config, scopes: p.scopes, resource: {} };
    }
    const config = new oidc.Configuration(
      {
        issuer: p.issuer ?? new URL(p.authorizeUrl!).origin,
        authorization_endpoint: p.authorizeUrl!,
        token_endpoint: p.tokenUrl!,
        ...(p.revokeUrl ? { revocation_endpoint: p.revokeUrl } : {}),
      },
      p.clientId!,
      undefined,
      auth,
    );
    if (insecure) oidc.allowInsecureRequests(config);
    return { config, scopes: p.scopes, resource: {} };
  }

  static newVerifier(): string {
    return oidc.randomPKCECodeVerifier();
  }

  async authorizationUrl(options: {
    redirectUri: string;
    state: string;
    verifier: string;
    /** Sign-in to the web chat: OpenID scopes and a nonce bound to this browser. */
    signIn?: { nonce: string };
    /** Asked for besides the provider's own (a tool server's scope step-up). */
    scopes?: readonly string[];
  }): Promise<URL> {
    const p = this.provider;
    const { config, scopes: configured, resource } = await this.config();
    const scopes = [...new Set([...configured, ...(options.scopes ?? [])])];
    const scope = options.signIn ? [...new Set(['openid', 'profile', ...scopes])] : scopes;
    const params: Record<string, string> = {
      redirect_uri: options.redirectUri,
      state: options.state,
      ...(scope.length ? { scope: scope.join(' ') } : {}),
      ...resource,
      ...p.extraParams,
      ...(options.signIn ? { nonce: options.signIn.nonce } : {}),
    };
    if (p.pkce) {
      params.code_challenge = await oidc.calculatePKCECodeChallenge(options.verifier);
      params.code_challenge_method = 'S256';
    }
    return oidc.buildAuthorizationUrl(config, params);
  }

  async exchange(callbackUrl: URL, options: { verifier: string; state: string }): Promise<TokenResult> {
    const { config, resource } = await this.config();
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callbackUrl,
      {
        expectedState: options.state,
        ...(this.provider.pkce ? { pkceCodeVerifier: options.verifier } : {}),
        idTokenExpected: false,
      },
      resource,
    );
    return toResult(tokens, undefined);
  }

  /** Sign-in to the web chat: the code for an ID token, checked (signature, issuer, audience, nonce). */
  async signInIdentity(
    callbackUrl: URL,
    options: { verifier: string; state: string; nonce: string },
  ): Promise<SignInClaims & { preferredUsername: string | undefined }> {
    const { config } = await this.config();
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      expectedState: options.state,
      expectedNonce: options.nonce,
      ...(this.provider.pkce ? { pkceCodeVerifier: options.verifier } : {}),
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims?.sub) throw new Error('the provider returned no ID token subject');
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const groups = Array.isArray(claims.groups)
      ? claims.groups.filter((g): g is string => typeof g === 'string')
      : [];
    return {
      sub: claims.sub,
      preferredUsername: text(claims.preferred_username),
      email: text(claims.email),
      emailVerified: claims.email_verified === true,
      hd: text(claims.hd),
      tid: text(claims.tid),
      groups,
    };
  }

  async refresh(refreshToken: string): Promise<TokenResult> {
    const { config, resource } = await this.config();
    const tokens = await oidc.refreshTokenGrant(config, refreshToken, resource);
    return toResult(tokens, refreshToken);
  }

  async revoke(token: string): Promise<void> {
    const { config } = await this.config();
    if (!config.serverMetadata().revocation_endpoint) return;
    await oidc.tokenRevocation(config, token);
  }
}

function toResult(
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
  previousRefresh: string | undefined,
): TokenResult {
  const expiresIn = tokens.expiresIn();
  return {
    accessToken: tokens.access_token,
    // Providers that do not rotate refresh tokens omit them from a refresh response.
    refreshToken: tokens.refresh_token ?? previousRefresh,
    tokenType: tokens.token_type,
    scope: tokens.scope,
    expiresAt: expiresIn === undefined ? null : Date.now() + expiresIn * 1000,
  };
}

/** What went wrong, in words safe to show: never the token endpoint's full response or any secret. */
export function describeOAuthError(error: unknown): string {
  if (error instanceof oidc.ResponseBodyError)
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  if (error instanceof oidc.AuthorizationResponseError)
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  if (error instanceof Error && 'code' in error)
    return `${(error as { code: string }).code}: ${error.message.slice(0, 200)}`;
  return error instanceof Error ? error.message.slice(0, 200) : 'unknown error';
}

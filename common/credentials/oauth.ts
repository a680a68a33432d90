/**
 * OAuth 2.0 with openid-client: the authorization URL (state + PKCE S256), the code exchange, refresh and
 * revocation. Endpoints come from the provider's configuration or from discovery of its issuer. Plain
 * HTTP is allowed only for loopback addresses (local development and tests).
 */
import * as oidc from 'openid-client';
import type { OAuthProvider } from './providers';

export interface TokenResult {
  accessToken: string;
  refreshToken: string | undefined;
  tokenType: string | undefined;
  scope: string | undefined;
  /** Epoch ms, or null when the provider gave no expiry. */
  expiresAt: number | null;
}

const isLoopback = (url: string) => ['localhost', '127.0.0.1', '[::1]'].includes(new URL(url).hostname);

export class OAuthClient {
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(readonly provider: OAuthProvider) {}

  private config(): Promise<oidc.Configuration> {
    this.configuration ??= this.load().catch((error: unknown) => {
      this.configuration = undefined; // a provider down at start must not be remembered as broken
      throw error;
    });
    return this.configuration;
  }

  private async load(): Promise<oidc.Configuration> {
    const p = this.provider;
    const auth = p.clientSecret ? oidc.ClientSecretPost(p.clientSecret) : oidc.None();
    const insecure = [p.issuer, p.authorizeUrl, p.tokenUrl].some((u) => u && isLoopback(u));
    if (p.issuer && !p.authorizeUrl) {
      return await oidc.discovery(new URL(p.issuer), p.clientId, undefined, auth, {
        execute: insecure ? [oidc.allowInsecureRequests] : [],
      });
    }
    const config = new oidc.Configuration(
      {
        issuer: p.issuer ?? new URL(p.authorizeUrl!).origin,
        authorization_endpoint: p.authorizeUrl!,
        token_endpoint: p.tokenUrl!,
        ...(p.revokeUrl ? { revocation_endpoint: p.revokeUrl } : {}),
      },
      p.clientId,
      undefined,
      auth,
    );
    if (insecure) oidc.allowInsecureRequests(config);
    return config;
  }

  static newVerifier(): string {
    return oidc.randomPKCECodeVerifier();
  }

  async authorizationUrl(options: { redirectUri: string; state: string; verifier: string }): Promise<URL> {
    const p = this.provider;
    const params: Record<string, string> = {
      redirect_uri: options.redirectUri,
      state: options.state,
      ...(p.scopes.length ? { scope: p.scopes.join(' ') } : {}),
      ...p.extraParams,
    };
    if (p.pkce) {
      params.code_challenge = await oidc.calculatePKCECodeChallenge(options.verifier);
      params.code_challenge_method = 'S256';
    }
    return oidc.buildAuthorizationUrl(await this.config(), params);
  }

  async exchange(callbackUrl: URL, options: { verifier: string; state: string }): Promise<TokenResult> {
    const tokens = await oidc.authorizationCodeGrant(await this.config(), callbackUrl, {
      expectedState: options.state,
      ...(this.provider.pkce ? { pkceCodeVerifier: options.verifier } : {}),
      idTokenExpected: false,
    });
    return toResult(tokens, undefined);
  }

  async refresh(refreshToken: string): Promise<TokenResult> {
    const tokens = await oidc.refreshTokenGrant(await this.config(), refreshToken);
    return toResult(tokens, refreshToken);
  }

  async revoke(token: string): Promise<void> {
    const config = await this.config();
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

/**
 * A real OpenID Connect provider for sign-in tests: the `oidc-provider` package (the certified Node
 * implementation) on 127.0.0.1, with its development login form (any login name; the password is ignored)
 * and consent page. The web chat's client is registered with a fixed redirect URI.
 */
import type { Server } from 'node:http';
import Provider from 'oidc-provider';
import { freePort } from './processes';

export const OIDC_CLIENT_ID = 'web-chat';
export const OIDC_CLIENT_SECRET = 'web-chat-secret-for-tests-4e1b';

export class TestOidcProvider {
  issuer = '';
  private server: Server | undefined;

  async start(redirectUri: string): Promise<this> {
    const port = await freePort();
    this.issuer = `http://127.0.0.1:${port}`;
    const provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: OIDC_CLIENT_ID,
          client_secret: OIDC_CLIENT_SECRET,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      pkce: { required: () => true },
      claims: { openid: ['sub'], profile: ['preferred_username'] },
      // Profile claims in the ID token itself, as most providers (Google, Entra, Keycloak) send them.
      conformIdTokenClaims: false,
      // The login form's name is the account and its subject (oidc-provider makes `sub` the account id);
      // `mallory.as.alice` is an account whose subject is that, but who chose the username "alice".
      findAccount: (_ctx: unknown, login: string) => ({
        accountId: login,
        claims: () => ({ sub: login, preferred_username: login.split('.as.').at(-1) }),
      }),
    });
    // Quiet: the development login form warns on every start.
    provider.on('server_error', () => {});
    this.server = provider.listen(port) as Server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

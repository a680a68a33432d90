/**
 * What every sign-in route shares, passed explicitly: the dependencies, the public base URL, whether
 * cookies are Secure, the cookies' names and lifetime, and the outcome page.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { Client } from '@temporalio/client';
import type { UsersTable } from '../../common/identities';
import type { Provider } from '../../infra/credentials/providers';
import type { CredentialService } from '../../infra/credentials/service';
import type { CredentialTrail } from '../credential-trail';
import type { Logger } from '../../infra/log';
import type { WebAuth } from '../web/auth/web-auth';
import { outcomePage } from './pages';

export const FLOW_TTL_MS = 10 * 60_000;
/** Binds a flow to the browser that started it: the callback must come back to the same one. */
export const BROWSER_COOKIE = 'agent_oauth_browser';
/** Set with the "Connect … for @owner?" page; only a post from that page carries it (SameSite=Strict). */
export const CONFIRM_COOKIE = 'agent_oauth_confirm';

export interface OAuthRouteContext {
  deps: OAuthRouteDeps;
  /** The public URL without its trailing slash: links, form actions and redirect URIs start with it. */
  base: string;
  /** Cookies are Secure when the gateway is served over https. */
  secureCookie: boolean;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

export const page = (
  c: Context,
  status: 200 | 400 | 401 | 403 | 404 | 502,
  kind: 'ok' | 'bad',
  title: string,
  detail: string,
) => c.html(outcomePage(kind, title, detail), status);

export interface OAuthRouteDeps {
  credentials: () => CredentialService;
  client: Client;
  publicUrl: string;
  /** Who opens a link, when the browser is signed in to the web chat. */
  webAuth: WebAuth;
  users: UsersTable;
  log: Logger;
  /** Connections go into the person's audit trail. */
  credentialTrail: CredentialTrail;
}

/** A Connect link whose ticket passed every check: the provider it is for and the person it serves. */
export interface CheckedLink<P extends Provider = Provider> {
  /** The provider's name, as in the URL. */
  name: string;
  provider: P;
  credentials: CredentialService;
  userId: string;
}

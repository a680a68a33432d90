/**
 * Sign-in mode (`WEB_LOGIN=<provider>`): OpenID Connect authorization code + PKCE with the policy file's
 * provider, through the same openid-client code as credential gates. The flow's state, nonce and verifier
 * live in a signed, ten-minute, HttpOnly cookie; the result is the signed, expiring session cookie.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { describeOAuthError, OAuthClient } from '../../../infra/credentials/oauth';
import { signLoginFlow, verifyLoginFlow } from '../../../infra/credentials/signed';
import { signInUserId } from '../../../common/identities';
import { admits } from '../../../common/sign-in-rule';
import type { GatewayDeps } from '../../platform';
import { outcomePage } from '../../oauth/pages';
import { refuseCrossSite, refuseForeignHost } from './request-guard';
import type { WebAuth } from './web-auth';

const FLOW_COOKIE = 'agent_login';
const FLOW_TTL_MS = 10 * 60_000;

export function mountLogin(app: Hono, deps: GatewayDeps, auth: WebAuth): void {
  const base = deps.config.publicUrl.replace(/\/$/, '');
  const key = () => deps.credentials().keys.signing;
  const bad = (c: Context, status: 400 | 403 | 502, title: string, detail: string) =>
    c.html(outcomePage('bad', title, detail), status);
  const client = () => {
    const provider = deps.credentials().provider(deps.config.web.loginProvider!);
    if (provider?.kind !== 'oauth2') throw new Error(`WEB_LOGIN names a provider that is not OAuth/OpenID`);
    return deps.credentials().client(provider.name) ?? new OAuthClient(provider);
  };

  app.get('/auth/login', async (c) => {
    const foreign = refuseForeignHost(c, auth);
    if (foreign) return bad(c, 403, 'Wrong address', foreign.error);
    const flow = {
      state: randomBytes(24).toString('base64url'),
      nonce: randomBytes(24).toString('base64url'),
      verifier: OAuthClient.newVerifier(),
      expiresAt: Date.now() + FLOW_TTL_MS,
    };
    let location: URL;
    try {
      location = await client().authorizationUrl({
        redirectUri: `${base}/auth/callback`,
        state: flow.state,
        verifier: flow.verifier,
        signIn: { nonce: flow.nonce },
      });
    } catch (error) {
      deps.log.warn('sign-in provider unreachable', { error: describeOAuthError(error) });
      return bad(
        c,
        502,
        'Sign-in is unavailable',
        'The sign-in provider cannot be reached. Try again in a moment.',
      );
    }
    // Lax: it must come back on the provider's top-level redirect to the callback.
    setCookie(c, FLOW_COOKIE, signLoginFlow(key(), flow), {
      httpOnly: true,
      sameSite: 'Lax',
      secure: auth.secureCookies,
      path: '/auth/',
      maxAge: FLOW_TTL_MS / 1000,
    });
    return c.redirect(location.href, 302);
  });

  app.get('/auth/callback', async (c) => {
    const flow = verifyLoginFlow(key(), getCookie(c, FLOW_COOKIE) ?? '');
    deleteCookie(c, FLOW_COOKIE, { path: '/auth/' });
    if (!flow.ok)
      return bad(
        c,
        400,
        'Sign-in expired',
        'This sign-in was not started here or took too long. Sign in again.',
      );
    const url = new URL(c.req.url);
    let identity: Awaited<ReturnType<OAuthClient['signInIdentity']>>;
    try {
      identity = await client().signInIdentity(new URL(`${base}/auth/callback${url.search}`), flow.value);
    } catch (error) {
      deps.log.warn('sign-in failed', { error: describeOAuthError(error) });
      return bad(c, 400, 'Sign-in failed', `${describeOAuthError(error)}. Nothing changed; sign in again.`);
    }
    // Only the subject decides who this is: people can often choose their preferred_username.
    const userId = signInUserId(deps.config.web.loginProvider!, identity.sub, deps.config.policy.users);
    if (!userId)
      return bad(
        c,
        400,
        'Sign-in failed',
        'The provider named nobody usable: its subject is empty, holds spaces or control characters, or is too long for an id here (at most 128 characters). Nothing changed; an operator can list that subject under a short name in the policy file’s "users".',
      );
    if (!admits(deps.config.web.admit, identity, userId)) {
      const who = identity.emailVerified && identity.email ? identity.email : identity.sub;
      deps.log.warn('web sign-in refused: the account is not on the list', { userId });
      return bad(
        c,
        403,
        'This account may not sign in here',
        `The provider signed you in as ${who}, which this agent does not admit. Ask its operator to add you (WEB_ALLOWED_USERS, WEB_ALLOWED_DOMAINS, WEB_ALLOWED_TENANTS or WEB_ALLOWED_GROUPS).`,
      );
    }
    auth.signIn(c, userId);
    deps.log.info('web sign-in', { userId });
    return c.redirect('/', 302);
  });

  app.post('/auth/logout', (c) => {
    const refused = refuseForeignHost(c, auth) ?? refuseCrossSite(c, auth, undefined);
    if (refused) return c.json({ error: refused.error }, refused.status);
    deleteCookie(c, auth.cookieName, { path: '/' });
    return c.json({ signedOut: true });
  });
}

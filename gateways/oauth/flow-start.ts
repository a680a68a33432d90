/**
 * The OAuth flow's first leg: a PKCE verifier and a signed, expiring state, the flow saved in the vault
 * bound to this browser by a cookie, and a redirect to the provider. A provider (or an MCP server's
 * authorization server) that cannot be reached gets a page that says so, and nothing is saved.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { McpAuthorizationError } from '../../infra/credentials/mcp-authorization';
import { describeOAuthError, OAuthClient } from '../../infra/credentials/oauth';
import { signState } from '../../infra/credentials/signed';
import { BROWSER_COOKIE, FLOW_TTL_MS, page, sha256, type OAuthRouteContext } from './route-context';
import type { CheckedLink } from './route-context';

export async function startFlow(ctx: OAuthRouteContext, c: Context, link: CheckedLink) {
  const { name, provider, credentials, userId } = link;
  const flowId = randomBytes(24).toString('base64url');
  const browser = getCookie(c, BROWSER_COOKIE) ?? randomBytes(24).toString('base64url');
  const verifier = OAuthClient.newVerifier();
  const expiresAt = Date.now() + FLOW_TTL_MS;
  let location: URL;
  try {
    // A tool server that asked for more than this person's sign-in grants (MCP scope step-up): asked for too.
    const wanted = (await credentials.vault.get(userId, name).catch(() => undefined))?.wantScope;
    location = await credentials.client(name)!.authorizationUrl({
      redirectUri: `${ctx.base}/oauth/${name}/callback`,
      state: signState(credentials.keys.signing, flowId, expiresAt),
      verifier,
      ...(wanted ? { scopes: wanted.split(' ') } : {}),
    });
  } catch (error) {
    ctx.deps.log.warn('oauth provider unreachable', { provider: name, error: describeOAuthError(error) });
    // An MCP server whose sign-in cannot work as set up says why (in words safe to show).
    if (error instanceof McpAuthorizationError)
      return page(
        c,
        502,
        'bad',
        `${provider.displayName} cannot sign you in`,
        `${error.message}. Nothing was connected; tell whoever runs this agent.`,
      );
    return page(
      c,
      502,
      'bad',
      `${provider.displayName} cannot be reached`,
      'Nothing was connected. Try again in a moment.',
    );
  }
  await credentials.vault.saveFlow({
    id: flowId,
    userId: link.userId,
    provider: name,
    verifier,
    browserHash: sha256(browser),
    expiresAt,
  });
  // Lax: the cookie comes back on the provider's top-level redirect to the callback, not on cross-site posts.
  setCookie(c, BROWSER_COOKIE, browser, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: ctx.secureCookie,
    path: '/oauth/',
    maxAge: FLOW_TTL_MS / 1000,
  });
  ctx.deps.log.info('oauth flow started', { provider: name, userId: link.userId });
  return c.redirect(location.href, 302);
}

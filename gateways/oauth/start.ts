/**
 * Starting a sign-in from a Connect link: the ticket is checked (provider, signature, expiry, single use)
 * and so is who opens it; a chat link opened where no sign-in shows who opens it asks first; then an API
 * key provider shows its form (api-key.ts) and an OAuth provider redirects to the provider (flow-start.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { aliasesOf } from '../../common/identities';
import { sameSecret } from '../../infra/same-secret';
import { verifyTicket, type Ticket } from '../../infra/credentials/signed';
import { apiKeyFormFor } from './api-key';
import { startFlow } from './flow-start';
import { confirmConnectPage } from './pages';
import { CONFIRM_COOKIE, FLOW_TTL_MS, page, type CheckedLink, type OAuthRouteContext } from './route-context';

export type { CheckedLink } from './route-context';

/** POST: only the confirmation page itself may continue, then the link starts as if opened directly. */
export async function continueFromConfirmPage(ctx: OAuthRouteContext, c: Context) {
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  // Only the confirmation page itself may continue: another site could post a ticket of its own (its owner's)
  // from the victim's browser, which a provider that remembers the victim would then sign in silently.
  const origin = c.req.header('origin')?.toLowerCase();
  const cookie = getCookie(c, CONFIRM_COOKIE) ?? '';
  const given = typeof form.confirm === 'string' ? form.confirm : '';
  const fromThisPage =
    (origin === undefined || ctx.deps.webAuth.served.origins.has(origin)) &&
    c.req.header('sec-fetch-site') !== 'cross-site' &&
    cookie.length > 0 &&
    sameSecret(given, cookie);
  if (!fromThisPage)
    return page(
      c,
      403,
      'bad',
      'Continue from the Connect page',
      'This request did not come from the Connect page in this browser. Nothing was connected; open your Connect link again.',
    );
  deleteCookie(c, CONFIRM_COOKIE, { path: '/oauth/' });
  return await begin(ctx, c, typeof form.ticket === 'string' ? form.ticket : '', true);
}

/** Checks the link's ticket and its opener, then asks, shows the API key form, or starts the OAuth flow. */
export async function begin(ctx: OAuthRouteContext, c: Context, ticketText: string, confirmed: boolean) {
  const name = c.req.param('provider')!;
  const credentials = ctx.deps.credentials();
  const provider = credentials.provider(name);
  if (!provider)
    return page(c, 404, 'bad', 'Unknown provider', `No credential provider "${name}" is configured here.`);
  const ticket = verifyTicket(credentials.keys.signing, ticketText);
  if (!ticket.ok)
    return ticket.reason === 'expired'
      ? page(
          c,
          400,
          'bad',
          'This link has expired',
          'Ask the agent again (or use "pending") for a fresh Connect button.',
        )
      : page(
          c,
          400,
          'bad',
          'This link is not valid',
          'It may have been altered or cut off. Use the Connect button again.',
        );
  if (ticket.value.provider !== name)
    return page(c, 400, 'bad', 'This link is not valid', 'It was made for another provider.');
  const refusal = refuseOpener(ctx, c, ticket.value);
  if (refusal) return refusal;
  const link: CheckedLink = { name, provider, credentials, userId: ticket.value.userId };
  if (!confirmed && !ctx.deps.webAuth.identify(c).ok) return askToConfirm(ctx, c, link, ticketText);
  if (
    ticket.value.nonce &&
    !(await credentials.vault.consumeTicket(ticket.value.nonce, ticket.value.expiresAt))
  )
    return page(
      c,
      400,
      'bad',
      'This link has been used',
      'A Connect link works once. Click the Connect button again for a fresh one.',
    );

  if (provider.kind === 'api_key') return apiKeyFormFor(ctx, c, { ...link, provider });
  return await startFlow(ctx, c, link);
}

/**
 * A link is personal: a web link needs its person signed in to the web chat in this browser; any link
 * opened by a browser signed in as someone else stores nothing. Legacy tickets (no channel) have expired.
 */
function refuseOpener(ctx: OAuthRouteContext, c: Context, ticket: Ticket) {
  if (!ticket.channel || ticket.channel === 'form')
    return page(c, 400, 'bad', 'This link has expired', 'Use the Connect button again for a fresh one.');
  const opener = ctx.deps.webAuth.identify(c);
  if (opener.ok && !aliasesOf(opener.caller.userId, ctx.deps.users).includes(ticket.userId))
    return page(
      c,
      403,
      'bad',
      'This link belongs to someone else',
      'Nothing was connected. Use your own Connect button.',
    );
  if (!opener.ok && ticket.channel === 'web')
    return page(
      c,
      401,
      'bad',
      'Sign in first',
      'This link is for the web chat: open it in the browser where you are signed in to the chat. Nothing was connected.',
    );
  return undefined;
}

/**
 * The "Connect … for @owner?" page, with its Strict cookie: a link can be forwarded, so the page names
 * whose agent the account will serve and only a deliberate post from it goes on.
 */
function askToConfirm(ctx: OAuthRouteContext, c: Context, link: CheckedLink, ticketText: string) {
  const confirm = randomBytes(18).toString('base64url');
  setCookie(c, CONFIRM_COOKIE, confirm, {
    httpOnly: true,
    sameSite: 'Strict',
    secure: ctx.secureCookie,
    path: '/oauth/',
    maxAge: FLOW_TTL_MS / 1000,
  });
  return c.html(
    confirmConnectPage({
      providerName: link.provider.displayName,
      owner: link.userId,
      action: `${ctx.base}/oauth/${link.name}/start`,
      ticket: ticketText,
      confirm,
      signInUrl: ctx.deps.webAuth.mode === 'login' ? `${ctx.base}/auth/login` : undefined,
    }),
    200,
    { 'content-security-policy': "frame-ancestors 'none'", 'x-frame-options': 'DENY' },
  );
}

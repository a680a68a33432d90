/**
 * Sign-in endpoints. `GET /oauth/<provider>/start?ticket=…` checks the Connect link's signed ticket,
 * starts an OAuth flow (state: signed, expiring, single-use, bound to the person and to this browser by
 * a cookie; PKCE S256) and redirects to the provider — or shows the API key form. The callback exchanges
 * the code with openid-client, stores the tokens encrypted in the vault and signals every workflow of that
 * person waiting on that provider. Every failure gets an explanatory page and changes nothing.
 * Tokens, codes, verifiers and client secrets are never logged.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { sameSecret } from '../../infra/same-secret';
import { McpAuthorizationError } from '../../infra/credentials/mcp-authorization';
import { describeOAuthError, OAuthClient } from '../../infra/credentials/oauth';
import type { CredentialService } from '../../infra/credentials/service';
import {
  signState,
  signTicket,
  verifyState,
  verifyTicket,
  type Ticket,
} from '../../infra/credentials/signed';
import { aliasesOf, type UsersTable } from '../../common/identities';
import type { WebAuth } from '../web/auth/web-auth';
import { userIdSchema } from '../../common/ids';
import type { Logger } from '../../infra/log';
import { apiKeyForm, confirmConnectPage, outcomePage } from './pages';
import { resumeWaitingWorkflows } from './resume';

const FLOW_TTL_MS = 10 * 60_000;
const COOKIE = 'agent_oauth_browser';
/** Set with the "Connect … for @owner?" page; only a post from that page carries it (SameSite=Strict). */
const CONFIRM_COOKIE = 'agent_oauth_confirm';

/** A waiting workflow in words: a conversation, or a mission's run. */
function describeWorkflow(workflowId: string): string {
  const run = /^mission-run:[^:]+:(\d+)$/.exec(workflowId);
  if (run) return `a mission run (run ${run[1]})`;
  const [, channel] = workflowId.split(':');
  return `your ${channel === 'web' ? 'web' : channel === 'slack' ? 'Slack' : channel === 'discord' ? 'Discord' : ''} conversation`.replace(
    '  ',
    ' ',
  );
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

export function oauthRoutes(deps: {
  credentials: () => CredentialService;
  client: Client;
  publicUrl: string;
  /** Who opens a link, when the browser is signed in to the web chat. */
  webAuth: WebAuth;
  users: UsersTable;
  log: Logger;
}): Hono {
  const app = new Hono();
  const base = deps.publicUrl.replace(/\/$/, '');
  const secureCookie = base.startsWith('https://');
  const page = (
    c: Context,
    status: 200 | 400 | 401 | 403 | 404 | 502,
    kind: 'ok' | 'bad',
    title: string,
    detail: string,
  ) => c.html(outcomePage(kind, title, detail), status);

  /**
   * A link is personal: a web link needs its person signed in to the web chat in this browser; any link
   * opened by a browser signed in as someone else stores nothing. Legacy tickets (no channel) have expired.
   */
  const refuseOpener = (c: Context, ticket: Ticket) => {
    if (!ticket.channel || ticket.channel === 'form')
      return page(c, 400, 'bad', 'This link has expired', 'Use the Connect button again for a fresh one.');
    const opener = deps.webAuth.identify(c);
    if (opener.ok && !aliasesOf(opener.caller.userId, deps.users).includes(ticket.userId))
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
  };

  /**
   * The stored credential is the person's whatever happens next: resuming their waiting conversations is
   * best-effort here (the page says which), and the sweep (resume-sweep.ts) finishes what fails.
   */
  const resume = async (userId: string, provider: string): Promise<string> => {
    try {
      const resumed = await resumeWaitingWorkflows(deps.client, userId, provider);
      deps.log.info('oauth connected', { provider, userId, resumed: resumed.length });
      if (!resumed.length)
        return 'Nothing was waiting for it; the agent uses it from now on. You can close this tab.';
      return `It continues now in ${resumed.map(describeWorkflow).join(', ')}. You can close this tab.`;
    } catch (error) {
      deps.log.warn('resuming after a sign-in failed; the sweep retries', {
        provider,
        userId,
        error: (error as Error).message,
      });
      return 'The agent could not be reached just now: what waits for this account continues within a minute, by itself. You can close this tab.';
    }
  };

  /**
   * GET: the Connect link. A chat link opened where no sign-in shows who opens it asks first (the page names
   * whose agent the account will serve); POST: the person's deliberate "continue" from that page.
   */
  app.get('/oauth/:provider/start', async (c) => await begin(c, c.req.query('ticket') ?? '', false));
  app.post('/oauth/:provider/start', async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    // Only the confirmation page itself may continue: another site could post a ticket of its own (its owner's)
    // from the victim's browser, which a provider that remembers the victim would then sign in silently.
    const origin = c.req.header('origin')?.toLowerCase();
    const cookie = getCookie(c, CONFIRM_COOKIE) ?? '';
    const given = typeof form.confirm === 'string' ? form.confirm : '';
    const fromThisPage =
      (origin === undefined || deps.webAuth.served.origins.has(origin)) &&
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
    return await begin(c, typeof form.ticket === 'string' ? form.ticket : '', true);
  });

  const begin = async (c: Context, ticketText: string, confirmed: boolean) => {
    const name = c.req.param('provider')!;
    const credentials = deps.credentials();
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
    const refusal = refuseOpener(c, ticket.value);
    if (refusal) return refusal;
    if (!confirmed && !deps.webAuth.identify(c).ok) {
      const confirm = randomBytes(18).toString('base64url');
      setCookie(c, CONFIRM_COOKIE, confirm, {
        httpOnly: true,
        sameSite: 'Strict',
        secure: secureCookie,
        path: '/oauth/',
        maxAge: FLOW_TTL_MS / 1000,
      });
      return c.html(
        confirmConnectPage({
          providerName: provider.displayName,
          owner: ticket.value.userId,
          action: `${base}/oauth/${name}/start`,
          ticket: ticketText,
          confirm,
          signInUrl: deps.webAuth.mode === 'login' ? `${base}/auth/login` : undefined,
        }),
        200,
        { 'content-security-policy': "frame-ancestors 'none'", 'x-frame-options': 'DENY' },
      );
    }
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

    if (provider.kind === 'api_key')
      return c.html(
        apiKeyForm({
          providerName: provider.displayName,
          owner: ticket.value.userId,
          action: `${base}/oauth/${name}/key`,
          ticket: signTicket(credentials.keys.signing, {
            userId: ticket.value.userId,
            provider: name,
            expiresAt: Date.now() + FLOW_TTL_MS,
            channel: 'form',
            nonce: randomBytes(18).toString('base64url'),
          }),
          help: provider.help,
        }),
      );

    const flowId = randomBytes(24).toString('base64url');
    const browser = getCookie(c, COOKIE) ?? randomBytes(24).toString('base64url');
    const verifier = OAuthClient.newVerifier();
    const expiresAt = Date.now() + FLOW_TTL_MS;
    let location: URL;
    try {
      location = await credentials.client(name)!.authorizationUrl({
        redirectUri: `${base}/oauth/${name}/callback`,
        state: signState(credentials.keys.signing, flowId, expiresAt),
        verifier,
      });
    } catch (error) {
      deps.log.warn('oauth provider unreachable', { provider: name, error: describeOAuthError(error) });
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
      userId: ticket.value.userId,
      provider: name,
      verifier,
      browserHash: sha256(browser),
      expiresAt,
    });
    // Lax: the cookie comes back on the provider's top-level redirect to the callback, not on cross-site posts.
    setCookie(c, COOKIE, browser, {
      httpOnly: true,
      sameSite: 'Lax',
      secure: secureCookie,
      path: '/oauth/',
      maxAge: FLOW_TTL_MS / 1000,
    });
    deps.log.info('oauth flow started', { provider: name, userId: ticket.value.userId });
    return c.redirect(location.href, 302);
  };

  app.get('/oauth/:provider/callback', async (c) => {
    const name = c.req.param('provider');
    const credentials = deps.credentials();
    const provider = credentials.provider(name);
    if (provider?.kind !== 'oauth2')
      return page(c, 404, 'bad', 'Unknown provider', `No OAuth provider "${name}" is configured here.`);
    const state = verifyState(credentials.keys.signing, c.req.query('state') ?? '');
    if (!state.ok)
      return state.reason === 'expired'
        ? page(
            c,
            400,
            'bad',
            'This sign-in took too long',
            'Nothing was connected. Use the Connect button again.',
          )
        : page(
            c,
            400,
            'bad',
            'This sign-in is not valid',
            'Its state is missing or was altered. Nothing was connected.',
          );
    const browser = getCookie(c, COOKIE);
    const consumed = await credentials.vault.consumeFlow(state.value.flowId, browser ? sha256(browser) : '-');
    if (consumed.status === 'used')
      return page(
        c,
        400,
        'bad',
        'This sign-in was already completed',
        'A sign-in link works once. Nothing changed.',
      );
    if (consumed.status === 'other_browser')
      return page(
        c,
        403,
        'bad',
        'This sign-in was started by someone else',
        'It must finish in the browser that started it. Nothing was connected.',
      );
    if (consumed.status !== 'ok' || consumed.flow.provider !== name)
      return page(
        c,
        400,
        'bad',
        'This sign-in is not valid',
        'Nothing was connected. Use the Connect button again.',
      );
    const flow = consumed.flow;
    const error = c.req.query('error');
    if (error) {
      const described =
        `${error}${c.req.query('error_description') ? `: ${c.req.query('error_description')}` : ''}`.slice(
          0,
          300,
        );
      deps.log.info('oauth sign-in refused by the provider', {
        provider: name,
        userId: flow.userId,
        error: described,
      });
      return page(
        c,
        400,
        'bad',
        error === 'access_denied' ? 'Access was not granted' : `${provider.displayName} refused the sign-in`,
        `${provider.displayName} said: ${described}. Nothing was connected; the agent keeps waiting until the prompt expires.`,
      );
    }
    try {
      const tokens = await credentials.client(name)!.exchange(new URL(c.req.url), {
        verifier: flow.verifier,
        state: c.req.query('state')!,
      });
      await credentials.storeTokens(flow.userId, name, tokens);
    } catch (exchangeError) {
      const described = describeOAuthError(exchangeError);
      deps.log.warn('oauth code exchange failed', { provider: name, userId: flow.userId, error: described });
      return page(
        c,
        502,
        'bad',
        `${provider.displayName} did not complete the sign-in`,
        `${described}. Nothing was connected.`,
      );
    }
    return page(c, 200, 'ok', `${provider.displayName} is connected`, await resume(flow.userId, name));
  });

  app.post('/oauth/:provider/key', async (c) => {
    const name = c.req.param('provider');
    const credentials = deps.credentials();
    const provider = credentials.provider(name);
    if (provider?.kind !== 'api_key')
      return page(c, 404, 'bad', 'Unknown provider', `No API key provider "${name}" is configured here.`);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const ticket = verifyTicket(credentials.keys.signing, typeof form.ticket === 'string' ? form.ticket : '');
    const expired = () =>
      page(
        c,
        400,
        'bad',
        'This form has expired, was used, or is not valid',
        'Nothing was saved. Use the Connect button again.',
      );
    if (
      !ticket.ok ||
      ticket.value.provider !== name ||
      ticket.value.channel !== 'form' ||
      !ticket.value.nonce
    )
      return expired();
    if (!userIdSchema.safeParse(ticket.value.userId).success)
      return page(c, 400, 'bad', 'This form is not valid', 'Nothing was saved.');
    const opener = deps.webAuth.identify(c);
    if (opener.ok && !aliasesOf(opener.caller.userId, deps.users).includes(ticket.value.userId))
      return page(c, 403, 'bad', 'This form belongs to someone else', 'Nothing was saved.');
    const key = typeof form.key === 'string' ? form.key.trim() : '';
    if (!key || key.length > 4_000 || /[\r\n]/.test(key))
      return page(
        c,
        400,
        'bad',
        'That key cannot be used',
        'Paste the key on one line (at most 4,000 characters). Nothing was saved.',
      );
    // Used up only by a key that is stored: a mistyped key can be corrected on the same form.
    if (!(await credentials.vault.consumeTicket(ticket.value.nonce, ticket.value.expiresAt)))
      return expired();
    await credentials.vault.put(ticket.value.userId, name, { accessToken: key }, null);
    return page(
      c,
      200,
      'ok',
      `${provider.displayName} is connected`,
      await resume(ticket.value.userId, name),
    );
  });

  return app;
}

/**
 * The OAuth callback: the provider sends the person back here. The flow is taken once, only by the browser
 * that started it; the code is exchanged (openid-client), the tokens stored encrypted in the vault, and
 * the person's waiting workflows resumed. Every refusal changes nothing.
 */
import type { Context } from 'hono';
import type { BlankEnv } from 'hono/types';
import { getCookie } from 'hono/cookie';
import { describeOAuthError } from '../../infra/credentials/oauth';
import type { OAuthProvider } from '../../infra/credentials/providers';
import type { CredentialService } from '../../infra/credentials/service';
import { verifyState } from '../../infra/credentials/signed';
import type { OAuthFlow } from '../../infra/credentials/vault';
import { resumeAndDescribe } from './resume';
import { BROWSER_COOKIE, page, sha256, type OAuthRouteContext } from './route-context';

type CallbackContext = Context<BlankEnv, '/oauth/:provider/callback'>;

export async function finishSignIn(ctx: OAuthRouteContext, c: CallbackContext) {
  const name = c.req.param('provider');
  const credentials = ctx.deps.credentials();
  const provider = credentials.provider(name);
  if (provider?.kind !== 'oauth2')
    return page(c, 404, 'bad', 'Unknown provider', `No OAuth provider "${name}" is configured here.`);
  const taken = await takeFlow(c, credentials, name);
  if (!taken.ok) return taken.refusal;
  const flow = taken.flow;
  const refused = refusedByProvider(ctx, c, name, provider, flow);
  if (refused) return refused;
  try {
    const tokens = await credentials.client(name)!.exchange(new URL(c.req.url), {
      verifier: flow.verifier,
      state: c.req.query('state')!,
    });
    await credentials.storeTokens(flow.userId, name, tokens);
    await ctx.deps.credentialTrail(flow.userId, { provider: name, action: 'connected', how: 'oauth' });
  } catch (exchangeError) {
    const described = describeOAuthError(exchangeError);
    ctx.deps.log.warn('oauth code exchange failed', {
      provider: name,
      userId: flow.userId,
      error: described,
    });
    return page(
      c,
      502,
      'bad',
      `${provider.displayName} did not complete the sign-in`,
      `${described}. Nothing was connected.`,
    );
  }
  return page(
    c,
    200,
    'ok',
    `${provider.displayName} is connected`,
    await resumeAndDescribe(ctx.deps, flow.userId, name),
  );
}

/** The flow this callback finishes: its state signed and unexpired, its flow unused and this browser's. */
async function takeFlow(
  c: CallbackContext,
  credentials: CredentialService,
  name: string,
): Promise<{ ok: true; flow: OAuthFlow } | { ok: false; refusal: Response }> {
  const refuse = (status: 400 | 403, title: string, detail: string) => ({
    ok: false as const,
    refusal: page(c, status, 'bad', title, detail),
  });
  const state = verifyState(credentials.keys.signing, c.req.query('state') ?? '');
  if (!state.ok)
    return state.reason === 'expired'
      ? refuse(400, 'This sign-in took too long', 'Nothing was connected. Use the Connect button again.')
      : refuse(
          400,
          'This sign-in is not valid',
          'Its state is missing or was altered. Nothing was connected.',
        );
  const browser = getCookie(c, BROWSER_COOKIE);
  const consumed = await credentials.vault.consumeFlow(state.value.flowId, browser ? sha256(browser) : '-');
  if (consumed.status === 'used')
    return refuse(400, 'This sign-in was already completed', 'A sign-in link works once. Nothing changed.');
  if (consumed.status === 'other_browser')
    return refuse(
      403,
      'This sign-in was started by someone else',
      'It must finish in the browser that started it. Nothing was connected.',
    );
  if (consumed.status !== 'ok' || consumed.flow.provider !== name)
    return refuse(400, 'This sign-in is not valid', 'Nothing was connected. Use the Connect button again.');
  return { ok: true, flow: consumed.flow };
}

/** The person declined, or the provider refused: the page repeats what the provider said (bounded). */
function refusedByProvider(
  ctx: OAuthRouteContext,
  c: CallbackContext,
  name: string,
  provider: OAuthProvider,
  flow: OAuthFlow,
) {
  const error = c.req.query('error');
  if (!error) return undefined;
  const described =
    `${error}${c.req.query('error_description') ? `: ${c.req.query('error_description')}` : ''}`.slice(
      0,
      300,
    );
  ctx.deps.log.info('oauth sign-in refused by the provider', {
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

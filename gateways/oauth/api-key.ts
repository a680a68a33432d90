/**
 * API key providers: the form a checked Connect link shows (with a fresh single-use ticket of its own), and
 * its submission, which stores the key in the vault and resumes the person's waiting workflows.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import type { BlankEnv } from 'hono/types';
import { aliasesOf } from '../../common/identities';
import { userIdSchema } from '../../common/ids';
import type { ApiKeyProvider } from '../../infra/credentials/providers';
import { signTicket, verifyTicket } from '../../infra/credentials/signed';
import { apiKeyForm } from './pages';
import { resumeAndDescribe } from './resume';
import { FLOW_TTL_MS, page, type OAuthRouteContext } from './route-context';
import type { CheckedLink } from './route-context';

export function apiKeyFormFor(ctx: OAuthRouteContext, c: Context, link: CheckedLink<ApiKeyProvider>) {
  const { name, provider, credentials } = link;
  return c.html(
    apiKeyForm({
      providerName: provider.displayName,
      owner: link.userId,
      action: `${ctx.base}/oauth/${name}/key`,
      ticket: signTicket(credentials.keys.signing, {
        userId: link.userId,
        provider: name,
        expiresAt: Date.now() + FLOW_TTL_MS,
        channel: 'form',
        nonce: randomBytes(18).toString('base64url'),
      }),
      help: provider.help,
    }),
  );
}

export async function saveApiKey(ctx: OAuthRouteContext, c: Context<BlankEnv, '/oauth/:provider/key'>) {
  const name = c.req.param('provider');
  const credentials = ctx.deps.credentials();
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
  if (!ticket.ok || ticket.value.provider !== name || ticket.value.channel !== 'form' || !ticket.value.nonce)
    return expired();
  if (!userIdSchema.safeParse(ticket.value.userId).success)
    return page(c, 400, 'bad', 'This form is not valid', 'Nothing was saved.');
  const opener = ctx.deps.webAuth.identify(c);
  if (opener.ok && !aliasesOf(opener.caller.userId, ctx.deps.users).includes(ticket.value.userId))
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
  if (!(await credentials.vault.consumeTicket(ticket.value.nonce, ticket.value.expiresAt))) return expired();
  await credentials.vault.put(ticket.value.userId, name, { accessToken: key }, null);
  await ctx.deps.credentialTrail(ticket.value.userId, {
    provider: name,
    action: 'connected',
    how: 'api_key',
  });
  return page(
    c,
    200,
    'ok',
    `${provider.displayName} is connected`,
    await resumeAndDescribe(ctx.deps, ticket.value.userId, name),
  );
}

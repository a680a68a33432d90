/**
 * The printed links that carry local mode's secret (`/?token=`, `/temporal/?token=`): the secret becomes the
 * session cookie and the browser is sent on to `to`, so it is not left in history or referrers.
 */
import type { Context } from 'hono';
import { outcomePage } from '../../oauth/pages';
import type { WebAuth } from './web-auth';

export function openTokenLink(
  c: Context,
  auth: WebAuth,
  token: string,
  to: string,
  headers: Record<string, string> = {},
): Response {
  if (!auth.tokenMatches(token))
    return c.html(
      outcomePage(
        'bad',
        'This link is not valid',
        'Open the link printed when the agent started (or read the secret in DATA_DIR/web-token).',
      ),
      401,
      headers,
    );
  auth.signIn(c, 'local');
  return c.redirect(to, 302);
}

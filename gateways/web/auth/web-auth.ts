/**
 * Who is calling the web chat, in each of the three modes (README "Security model"):
 * - local: the per-install secret as `Authorization: Bearer`, or the session cookie that `/?token=` set;
 * - login: the session cookie set after an OpenID Connect sign-in;
 * - proxy: the trusted header, believed only from WEB_TRUSTED_PROXIES (from anywhere else it is refused).
 * Nothing a page can choose (a header, a query parameter) names the user.
 */
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { AppConfig } from '../../../infra/config';
import { signWebSession, verifyWebSession } from '../../../infra/credentials/signed';
import { proxyUserId } from '../../../common/identities';
import { sameSecret } from '../../../infra/same-secret';
import { addressList, listed, remoteAddress, servedNames } from './addresses';
import { loadOrCreateWebToken, tokenFingerprint } from './web-token';

const SESSION_COOKIE = 'agent_session';

export type Via = 'bearer' | 'cookie' | 'proxy';
export interface WebCaller {
  userId: string;
  via: Via;
}
export type Identified =
  { ok: true; caller: WebCaller } | { ok: false; status: 400 | 401 | 403; error: string };

export class WebAuth {
  readonly mode: AppConfig['web']['mode'];
  readonly served: { hosts: Set<string>; origins: Set<string> };
  readonly secureCookies: boolean;
  /**
   * The session cookie's name. Cookies ignore ports, so in local mode it carries the port (as Jupyter's do):
   * another local server on another port never receives it, and two installs never overwrite each other's.
   */
  readonly cookieName: string;
  private readonly token: string | undefined;
  private readonly binding: string;
  private readonly proxies;

  constructor(
    private readonly config: AppConfig,
    private readonly signingKey: () => Buffer,
  ) {
    this.mode = config.web.mode;
    this.token =
      this.mode === 'local' ? loadOrCreateWebToken(config.dataDir, config.web.authToken) : undefined;
    this.binding =
      this.mode === 'local' ? `local:${tokenFingerprint(this.token!)}` : `login:${config.web.loginProvider}`;
    this.proxies = addressList(config.web.trustedProxies);
    this.served = servedNames(config.publicUrl, config.host, config.port);
    this.secureCookies = config.publicUrl.startsWith('https://');
    this.cookieName = this.mode === 'local' ? `${SESSION_COOKIE}_${config.port}` : SESSION_COOKIE;
  }

  /** Local mode's secret, for the printed link (`/?token=`). */
  get localToken(): string | undefined {
    return this.token;
  }

  tokenMatches(presented: string): boolean {
    return this.token !== undefined && sameSecret(presented, this.token);
  }

  identify(c: Context): Identified {
    if (this.mode === 'proxy') return this.fromProxy(c);
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    if (bearer !== undefined) {
      if (this.mode === 'local' && this.tokenMatches(bearer))
        return { ok: true, caller: { userId: 'local', via: 'bearer' } };
      return { ok: false, status: 401, error: 'wrong access token' };
    }
    const cookie = getCookie(c, this.cookieName);
    if (cookie) {
      const session = verifyWebSession(this.signingKey(), cookie);
      if (session.ok && session.value.binding === this.binding)
        return { ok: true, caller: { userId: session.value.userId, via: 'cookie' } };
      return {
        ok: false,
        status: 401,
        error: session.ok || session.reason === 'invalid' ? 'sign in again' : 'your sign-in has expired',
      };
    }
    return {
      ok: false,
      status: 401,
      error:
        this.mode === 'local'
          ? 'not signed in: open the link `npm start` printed (http://localhost:<port>/?token=…), or send Authorization: Bearer <the secret in DATA_DIR/web-token>'
          : 'not signed in: open /auth/login',
    };
  }

  private fromProxy(c: Context): Identified {
    const header = this.config.web.trustedUserHeader!;
    const name = c.req.header(header);
    if (!listed(this.proxies, remoteAddress(c)))
      return {
        ok: false,
        status: name === undefined ? 401 : 403,
        error:
          name === undefined
            ? 'requests must come through the signing-in proxy'
            : `the ${header} header is accepted only from WEB_TRUSTED_PROXIES`,
      };
    if (!name) return { ok: false, status: 401, error: `no user: your proxy did not set ${header}` };
    const userId = proxyUserId(name, this.config.policy.users);
    if (!userId)
      return {
        ok: false,
        status: 400,
        error: `invalid user name in ${header}: use 1-120 letters, digits or . _ @ -`,
      };
    return { ok: true, caller: { userId, via: 'proxy' } };
  }

  /** Signs a person in on this response: a signed, expiring, HttpOnly, SameSite=Strict cookie. */
  signIn(c: Context, userId: string): void {
    const ttl = this.config.web.sessionTtlMs;
    const value = signWebSession(this.signingKey(), {
      userId,
      expiresAt: Date.now() + ttl,
      binding: this.binding,
    });
    setCookie(c, this.cookieName, value, {
      httpOnly: true,
      sameSite: 'Strict',
      secure: this.secureCookies,
      path: '/',
      maxAge: Math.floor(ttl / 1000),
    });
  }
}

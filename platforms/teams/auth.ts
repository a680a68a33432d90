/**
 * Incoming activities are believed only as the Bot Connector signs them (Bot Framework's "authenticate requests from
 * the Bot Connector service"): a JWT in `Authorization: Bearer`, RS256, signed by a key the connector publishes
 * (its OpenID metadata's `jwks_uri`, read again daily and when an unknown key id appears), issued by
 * `https://api.botframework.com`, for this bot (audience = the app id), unexpired (five minutes' clock skew), and
 * naming the activity's own `serviceUrl` (so a token cannot send the bot's answers somewhere else).
 */
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';

const ISSUER = 'https://api.botframework.com';
const METADATA_TTL_MS = 24 * 3_600_000;

export type Verdict = { ok: true } | { ok: false; reason: string };

export class ConnectorAuth {
  private keys: { get: JWTVerifyGetKey; at: number } | undefined;

  constructor(private readonly options: { appId: string; openIdMetadataUrl: string }) {}

  private async signingKeys(): Promise<JWTVerifyGetKey> {
    if (this.keys && Date.now() - this.keys.at < METADATA_TTL_MS) return this.keys.get;
    const response = await fetch(this.options.openIdMetadataUrl, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`the Bot Connector's OpenID metadata answered ${response.status}`);
    const metadata = (await response.json()) as { jwks_uri?: unknown };
    if (typeof metadata.jwks_uri !== 'string')
      throw new Error("the Bot Connector's OpenID metadata has no jwks_uri");
    const get = createRemoteJWKSet(new URL(metadata.jwks_uri), { cooldownDuration: 30_000 });
    this.keys = { get, at: Date.now() };
    return get;
  }

  async verify(authorization: string | undefined, serviceUrl: unknown): Promise<Verdict> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return { ok: false, reason: 'no bearer token' };
    let payload;
    try {
      ({ payload } = await jwtVerify(token, await this.signingKeys(), {
        issuer: ISSUER,
        audience: this.options.appId,
        algorithms: ['RS256'],
        clockTolerance: 300,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      return { ok: false, reason: (error as Error).message.slice(0, 200) };
    }
    const signed = typeof payload.serviceurl === 'string' ? payload.serviceurl : undefined;
    const same = (a: string) => a.replace(/\/+$/, '').toLowerCase();
    if (!signed || typeof serviceUrl !== 'string' || same(signed) !== same(serviceUrl))
      return { ok: false, reason: "the token's serviceurl is not the activity's serviceUrl" };
    return { ok: true };
  }
}

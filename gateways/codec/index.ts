/**
 * The codec endpoint for the Temporal UI (its "Codec Server" setting: `<gateway>/codec`): POST
 * /codec/decode and /codec/encode with `{payloads: [...]}`, as the Temporal codec server protocol defines.
 * Mounted only with PAYLOAD_KEY. Who may decode: `Authorization: Bearer <CODEC_AUTH_TOKEN>` (the UI's "pass
 * access token", compared in constant time), or a person signed in to the web chat (sign-in or proxy mode).
 * Without either, only a gateway on loopback serves it: decoding shows conversations in clear text.
 * CORS answers the UI's origins (CODEC_CORS_ORIGINS).
 */
import type { Context, Hono } from 'hono';
import { cors } from 'hono/cors';
import { z } from 'zod';
import { EncryptionCodec, fromJson, payloadKey, toJson } from '../../infra/temporal/codec';
import { sameSecret } from '../../infra/same-secret';
import type { GatewayDeps } from '../platform';
import { isLoopbackHost } from '../web/auth/addresses';
import { refuseForeignHost } from '../web/auth/request-guard';

const bodySchema = z.object({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), z.string()).optional(), data: z.string().optional() }))
    .max(1_000),
});

export function mountCodec(app: Hono, deps: GatewayDeps): void {
  const { payloadKey: keyText, authToken, corsOrigins } = deps.config.codec;
  if (!keyText) return;
  const codec = new EncryptionCodec(payloadKey(keyText));
  const onLoopback = isLoopbackHost(deps.config.host);
  const authorized = (c: Context) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    if (authToken && bearer !== undefined && sameSecret(bearer, authToken)) return true;
    if (deps.webAuth.mode !== 'local' && deps.webAuth.identify(c).ok) return true;
    return !authToken && onLoopback;
  };
  app.use(
    '/codec/*',
    cors({
      origin: corsOrigins,
      allowMethods: ['POST', 'OPTIONS'],
      allowHeaders: ['content-type', 'x-namespace', 'authorization'],
      credentials: true,
    }),
  );
  for (const direction of ['decode', 'encode'] as const) {
    app.post(`/codec/${direction}`, async (c) => {
      // A DNS-rebinding page would otherwise reach a loopback gateway's codec under its own name.
      const foreign = refuseForeignHost(c, deps.webAuth);
      if (foreign) return c.json({ error: foreign.error }, foreign.status);
      if (!authorized(c))
        return c.json(
          {
            error: authToken
              ? 'the codec endpoint needs Authorization: Bearer <CODEC_AUTH_TOKEN>'
              : 'the codec endpoint needs a sign-in (or CODEC_AUTH_TOKEN) when the gateway is not on loopback',
          },
          401,
        );
      const parsed = bodySchema.safeParse(await c.req.json().catch(() => undefined));
      if (!parsed.success)
        return c.json({ error: 'expected {"payloads": [{"metadata": {...}, "data": "<base64>"}]}' }, 400);
      try {
        const payloads = await codec[direction](parsed.data.payloads.map(fromJson));
        return c.json({ payloads: payloads.map(toJson) });
      } catch (error) {
        return c.json({ error: `cannot ${direction}: ${(error as Error).message}` }, 400);
      }
    });
  }
}

/**
 * The codec endpoint for the Temporal UI (its "Codec Server" setting: `<gateway>/codec`): POST
 * /codec/decode and /codec/encode with `{payloads: [...]}`, as the Temporal codec server protocol defines.
 * Mounted only with PAYLOAD_KEY. Who may decode: `Authorization: Bearer <CODEC_AUTH_TOKEN>` (the UI's "pass
 * access token", compared in constant time), or an operator signed in to the web chat (sign-in or proxy mode): the
 * people TEMPORAL_UI_USERS names, the same who may open the Temporal UI. Anyone else signed in is refused.
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
  /** Who may decode: 'ok', or the status and words of a refusal. */
  const refusal = (c: Context): { status: 401 | 403; error: string } | undefined => {
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    if (authToken && bearer !== undefined && sameSecret(bearer, authToken)) return undefined;
    if (deps.webAuth.mode !== 'local') {
      const who = deps.webAuth.identify(c);
      if (who.ok && deps.config.temporal.uiUsers.includes(who.caller.userId)) return undefined;
      if (who.ok)
        return {
          status: 403,
          error: `the codec endpoint shows every conversation in clear text: only the operators TEMPORAL_UI_USERS names may use it, and @${who.caller.userId} is not one of them`,
        };
    } else if (!authToken && onLoopback) return undefined;
    return {
      status: 401,
      error: authToken
        ? 'the codec endpoint needs Authorization: Bearer <CODEC_AUTH_TOKEN>'
        : 'the codec endpoint needs a sign-in as an operator (TEMPORAL_UI_USERS) or CODEC_AUTH_TOKEN when the gateway is not on loopback',
    };
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
      const refused = refusal(c);
      if (refused) return c.json({ error: refused.error }, refused.status);
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

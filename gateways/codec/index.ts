/**
 * The codec endpoint for the Temporal UI (its "Codec Server" setting: `<gateway>/codec`): POST
 * /codec/decode and /codec/encode with `{payloads: [...]}`, as the Temporal codec server protocol defines.
 * Mounted only with PAYLOAD_KEY. Who may decode: `Authorization: Bearer <CODEC_AUTH_TOKEN>` (the UI's "pass
 * access token", compared in constant time), or an operator signed in to the web chat (sign-in or proxy mode): the
 * people TEMPORAL_UI_USERS names, the same who may open the Temporal UI. Anyone else signed in is refused.
 * Without either, only a gateway on loopback serves it: decoding shows conversations in clear text.
 * CORS answers the UI's origins (CODEC_CORS_ORIGINS).
 */
import type { Hono } from 'hono';
import { cors } from 'hono/cors';
import { z } from 'zod';
import { EncryptionCodec, fromJson, payloadKey, toJson } from '../../infra/temporal/codec';
import type { GatewayDeps } from '../platform';
import { operatorGuard } from '../operator-guard';
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
  const refusal = operatorGuard(deps, {
    name: 'the codec endpoint',
    why: 'shows every conversation in clear text',
    token: authToken,
    tokenSetting: 'CODEC_AUTH_TOKEN',
  });
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

/**
 * The codec endpoint for the Temporal UI (its "Codec Server" setting: `<gateway>/codec`): POST
 * /codec/decode and /codec/encode with `{payloads: [...]}`, as the Temporal codec server protocol defines.
 * Mounted only with PAYLOAD_KEY; CODEC_AUTH_TOKEN requires `Authorization: Bearer <token>` (the UI's "pass
 * access token", or a proxy); CORS answers the UI's origins (CODEC_CORS_ORIGINS).
 */
import type { Hono } from 'hono';
import { cors } from 'hono/cors';
import { z } from 'zod';
import { EncryptionCodec, fromJson, payloadKey, toJson } from '../../common/temporal/codec';
import type { GatewayDeps } from '../platform';

const bodySchema = z.object({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), z.string()).optional(), data: z.string().optional() }))
    .max(1_000),
});

export function mountCodec(app: Hono, deps: GatewayDeps): void {
  const { payloadKey: keyText, authToken, corsOrigins } = deps.config.codec;
  if (!keyText) return;
  const codec = new EncryptionCodec(payloadKey(keyText));
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
      if (authToken && c.req.header('authorization') !== `Bearer ${authToken}`)
        return c.json({ error: 'the codec endpoint needs Authorization: Bearer <CODEC_AUTH_TOKEN>' }, 401);
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

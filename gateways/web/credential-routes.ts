/** The signed-in person's connected providers (names and expiry only), and disconnect. */
import type { Context } from 'hono';
import type { ApiEnv, WebApi } from './api-context';

export async function listCredentials(api: WebApi, c: Context<ApiEnv>) {
  const credentials = api.deps.credentials();
  const connected = await credentials.vault.connected(c.get('userId'));
  return c.json({
    providers: Object.values(credentials.providers).map((p) => ({
      name: p.name,
      displayName: p.displayName,
      kind: p.kind,
      connected: connected.some((x) => x.provider === p.name),
      connectUrl: api.deps.connectUrl(c.get('userId'), p.name),
    })),
  });
}

export async function disconnectCredential(api: WebApi, c: Context<ApiEnv, '/credentials/:provider'>) {
  const provider = c.req.param('provider');
  const credentials = api.deps.credentials();
  if (!credentials.provider(provider))
    return c.json({ error: `no provider "${provider}" is configured` }, 404);
  const removed = await credentials.disconnect(c.get('userId'), provider);
  api.deps.log.info('credential disconnected', { provider, userId: c.get('userId'), removed });
  if (removed) await api.deps.credentialTrail(c.get('userId'), { provider, action: 'disconnected' });
  return c.json({ disconnected: removed });
}

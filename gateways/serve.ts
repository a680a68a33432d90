/** Runs the gateway's HTTP server; used by `npm run gateway` and by `npm start`. */
import { makeDataDirPrivate } from '../infra/data-dir';
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Connection } from '@temporalio/client';
import type { AppConfig } from '../infra/config';
import { AgentError, ErrorCode } from '../common/errors';
import { CredentialService } from '../infra/credentials/service';
import type { Logger } from '../infra/log';
import { dataConverterFor } from '../infra/temporal/codec';
import { connectClient } from '../infra/temporal/connect';
import { withSealing } from '../infra/temporal/sealing-interceptor';
import { loadGatewayKey } from '../infra/gateway-seal';
import { registerSearchAttributesPatiently } from '../infra/temporal/search-attributes';
import { startTracing } from '../infra/telemetry';
import { createGatewayApp } from './app';
import { StreamHub } from './stream-hub';
import { refuseDeclaredOversize } from './body-limits';
import { nodePlatforms } from './registry';
import { isLoopbackHost } from './web/auth/addresses';
import { countRequest, serveGatewayMetrics } from './metrics';
import { WebAuth } from './web/auth/web-auth';

export interface RunningGateway {
  url: string;
  /** Local mode: the link that signs the browser in (`/?token=…`). */
  chatUrl: string;
  /** The embedded Temporal UI behind the gateway (TEMPORAL_UI=gateway), signed in the same way; else its URL. */
  temporalUiUrl: string | undefined;
  close(): Promise<void>;
}

export async function startGateway(
  config: AppConfig,
  address: string,
  log: Logger,
  /** `npm start`: the hub the worker in the same process streams answers into. */
  extras: { streams?: StreamHub } = {},
): Promise<RunningGateway> {
  refuseUnauthenticatedExposure(config);
  makeDataDirPrivate(config.dataDir, (message) => log.warn(message));
  const tracing = startTracing(config.tracing, 'gateway');
  // Every signal sent in a person's name leaves sealed with the gateway key (infra/gateway-seal.ts).
  const client = await connectClient(
    address,
    config.temporal.namespace,
    dataConverterFor(config.codec.payloadKey),
    config.temporal,
    withSealing(loadGatewayKey(config.dataDir, config.gatewayKey), tracing?.client),
  );
  // The first message may come before any worker has run on a fresh server: the gateway's
  // signal-with-start sets these attributes, so it registers them too (idempotently).
  await registerSearchAttributesPatiently(client.connection as Connection, config.temporal.namespace, (m) =>
    log.info(m),
  ).catch((error: Error) =>
    log.warn('could not register search attributes; a first message will try again', {
      error: error.message,
    }),
  );
  let credentialService: CredentialService | undefined;
  const credentials = () => (credentialService ??= CredentialService.fromConfig(config));
  // A shared vault (PostgreSQL) is reached and migrated at start: a wrong DATABASE_URL fails here, loudly.
  if (config.credentials.databaseUrl) await credentials().ready();
  const webAuth = new WebAuth(config, () => credentials().keys.signing);
  const closers: (() => void)[] = [];
  const deps = {
    config,
    client,
    log,
    credentials,
    webAuth,
    onClose: (stop: () => void) => closers.push(stop),
    streams: extras.streams ?? new StreamHub(),
  };
  const app = createGatewayApp(deps);
  const honoListener = getRequestListener(app.fetch);
  // Platforms that bring their own HTTP receiver (Slack's Bolt) get their paths; everything else is Hono.
  const started = nodePlatforms.flatMap((platform) => {
    const created = platform.create(deps);
    return created ? [created] : [];
  });
  const nodeRoutes = started.flatMap((p) =>
    p.prefix && p.listener ? [{ prefix: p.prefix, listener: p.listener }] : [],
  );
  const server = createServer((req, res) => {
    res.once('finish', () => countRequest(req.url, res.statusCode));
    if (refuseDeclaredOversize(req, res)) return;
    const route = nodeRoutes.find((r) => req.url?.startsWith(r.prefix));
    void (route ? route.listener(req, res) : honoListener(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  for (const platform of started) await platform.start?.();
  // Its own port, never the public listener (GATEWAY_METRICS_ADDRESS).
  const metrics = config.gatewayMetricsAddress
    ? await serveGatewayMetrics(config.gatewayMetricsAddress)
    : undefined;
  if (metrics) log.info('gateway metrics', { address: config.gatewayMetricsAddress });
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`;
  log.info('gateway listening', { url });
  const token = config.web.enabled ? webAuth.localToken : undefined;
  return {
    url,
    chatUrl: token
      ? `${config.publicUrl.replace(/\/$/, '')}/?token=${encodeURIComponent(token)}`
      : config.publicUrl,
    temporalUiUrl:
      token && config.temporal.ui === 'gateway' && config.temporal.uiUrl
        ? `${config.temporal.uiUrl}/?token=${encodeURIComponent(token)}`
        : config.temporal.uiUrl,
    async close() {
      // Live streams never end on their own, so open connections are cut rather than awaited.
      for (const platform of started) await platform.stop?.().catch(() => {});
      for (const stop of closers) stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      metrics?.closeAllConnections();
      await new Promise<void>((resolve) => (metrics ? metrics.close(() => resolve()) : resolve()));
      await client.connection.close();
      await credentialService?.close();
      await tracing?.shutdown().catch(() => {});
    },
  };
}

/**
 * Local mode trusts whoever holds the per-install secret, which is fine on one machine: listening beyond
 * loopback needs a real sign-in (WEB_LOGIN) or a signing-in proxy (WEB_TRUSTED_USER_HEADER).
 */
function refuseUnauthenticatedExposure(config: AppConfig): void {
  if (!config.web.enabled || config.web.mode !== 'local' || isLoopbackHost(config.host)) return;
  throw new AgentError(
    ErrorCode.ConfigInvalid,
    `HOST=${config.host} would put the web chat on the network with only the local secret: set WEB_LOGIN=<provider> (sign-in with OpenID Connect) or WEB_TRUSTED_USER_HEADER with WEB_TRUSTED_PROXIES (a signing-in proxy), or WEB_CHAT=off (Slack and Discord only), or keep HOST=127.0.0.1.`,
  );
}

/**
 * No Docker engine runs in CI, so the deployment files are checked by reading them against the code; the
 * one-shot database job is run for real against a PostgreSQL server. test/deploy/dist.test.ts builds and
 * runs the compiled code the image runs.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import tls from 'node:tls';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig, TEMPORAL_UI_PATH } from '../../infra/config';
import { PgVault } from '../../infra/credentials/pg-vault';
import { tempDir } from '../helpers/config';
import { startPostgres, type TestPostgres } from '../helpers/postgres';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
type Service = {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  configs?: { source: string; target: string }[];
};
const file = parse(read('docker-compose.yml')) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  configs: Record<string, { content: string }>;
};
const compose = file.services;
/** What the container's shell receives: Compose turns `$$` into `$`. */
const unescape = (script: string) => script.replaceAll('$$', '$');
const services = Object.keys(compose);

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, Temporal with its schema and namespace jobs, its UI, the worker and the gateway (and, in a profile, Prometheus and Grafana)', () => {
    expect(services.sort()).toEqual([
      'agent-database',
      'gateway',
      'grafana',
      'postgresql',
      'prometheus',
      'temporal',
      'temporal-certs',
      'temporal-namespace',
      'temporal-schema',
      'temporal-ui',
      'worker',
    ]);
  });

  it('scrapes the worker’s metrics in the observability profile, with the rules and dashboard it ships', () => {
    const profiled = file.services as Record<string, Service & { profiles?: string[] }>;
    for (const name of ['prometheus', 'grafana'])
      expect(profiled[name]!.profiles, name).toEqual(['observability']);
    const port = compose.worker!.environment!.WORKER_METRICS_ADDRESS!.split(':').at(-1);
    expect(
      loadConfig({ WORKER_METRICS_ADDRESS: compose.worker!.environment!.WORKER_METRICS_ADDRESS })
        .workerMetricsAddress,
    ).toBe('0.0.0.0:9464');
    const prometheus = parse(read('ops/prometheus/prometheus.yml')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    expect(prometheus.scrape_configs[0]!.static_configs[0]!.targets).toEqual([`worker:${port}`]);
    const gatewayAddress = compose.gateway!.environment!.GATEWAY_METRICS_ADDRESS!;
    expect(loadConfig({ GATEWAY_METRICS_ADDRESS: gatewayAddress }).gatewayMetricsAddress).toBe(
      gatewayAddress,
    );
    expect(prometheus.scrape_configs[1]!.static_configs[0]!.targets).toEqual([
      `gateway:${gatewayAddress.split(':').at(-1)}`,
    ]);
    // Never published: the metrics port is the compose network's only.
    expect(JSON.stringify(compose.gateway!.ports ?? [])).not.toContain(gatewayAddress.split(':').at(-1));
    for (const mount of [...(compose.prometheus!.volumes ?? []), ...(compose.grafana!.volumes ?? [])].filter(
      (v) => v.startsWith('./'),
    ))
      expect(existsSync(path.join(ROOT, mount.split(':')[0]!)), mount).toBe(true);
    // Every product metric the rules and the dashboard use is one the code emits.
    const emitted = [
      'workflows/session/gate-metrics.ts',
      'activities/metrics.ts',
      'gateways/metrics.ts',
      'workers/drain-metrics.ts',
    ]
      .map((f) => read(f))
      .join('\n');
    const used =
      `${read('ops/prometheus/alerts.yml')}${read('ops/grafana/dashboards/agent.json')}`.match(
        /agent_[a-z_]+/g,
      ) ?? [];
    for (const name of new Set(used)) {
      const base = name.replace(/_(total|bucket|count|sum)$/, '');
      expect(emitted.includes(`'${base}'`) || emitted.includes(`'${name}'`), name).toBe(true);
    }
    expect(compose.grafana!.ports).toEqual(['127.0.0.1:3001:3000']);
  });

  it('runs compiled JavaScript (what `npm run build` writes), not tsx', () => {
    expect(compose.worker!.command).toEqual(['node', 'dist/workers/main.js']);
    expect(compose.gateway!.command).toEqual(['node', 'dist/gateways/main.js']);
    expect(read('docker-compose.yml')).not.toContain('tsx');
  });

  it('follows Temporal’s current self-hosting shape: the server image, schema and namespace from admin-tools', () => {
    for (const name of services) expect(compose[name]!.image ?? '', name).not.toContain('auto-setup');
    const version = compose.temporal!.image!.match(/^temporalio\/server:(\d+\.\d+\.\d+)$/)?.[1];
    expect(version).toBeDefined();
    // Admin tools of the very version of the server: the schema it sets up is the one the server expects.
    expect(compose['temporal-schema']!.image).toBe(`temporalio/admin-tools:${version}`);
    expect(compose['temporal-namespace']!.image).toBe(`temporalio/admin-tools:${version}`);
    expect(compose.temporal!.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
      'temporal-certs': { condition: 'service_completed_successfully' },
    });
    const schema = unescape(compose['temporal-schema']!.command!.join('\n'));
    for (const db of ['temporal', 'temporal_visibility']) {
      expect(schema).toContain(`--db ${db} setup-schema -v 0.0`);
      expect(schema).toMatch(new RegExp(`--db ${db} update-schema -d \\$schemas/\\w+/versioned`));
    }
    // The server refuses to start without its dynamic configuration file: it is provided.
    const [dynamic] = compose.temporal!.configs!;
    expect(file.configs[dynamic!.source]!.content).toContain('limit.maxIDLength');
    expect(`/etc/temporal/${compose.temporal!.environment!.DYNAMIC_CONFIG_FILE_PATH}`).toBe(dynamic!.target);
    expect(unescape(compose['temporal-namespace']!.command!.join('\n'))).toContain(
      'temporal operator namespace create -n default',
    );
  });

  it('starts the worker and gateway once Temporal has its namespace and the agent its database', () => {
    for (const name of ['worker', 'gateway']) {
      expect(compose[name]!.environment).toMatchObject({
        TEMPORAL_ADDRESS: 'temporal:7233',
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_TASK_QUEUE: 'agent',
      });
      expect(compose[name]!.depends_on).toEqual({
        'temporal-namespace': { condition: 'service_completed_successfully' },
        'agent-database': { condition: 'service_completed_successfully' },
      });
    }
    expect(compose.gateway!.environment).toMatchObject({ HOST: '0.0.0.0', PORT: '3000' });
  });

  it('has no default database password anywhere: every one is required from .env', () => {
    const text = read('docker-compose.yml');
    expect(text).not.toMatch(/PASSWORD: temporal|PGPASSWORD: temporal|POSTGRES_PWD: temporal|:-agent\}/);
    const passwords = Object.values(compose).flatMap((service) =>
      Object.entries(service.environment ?? {}).filter(([name]) => /PASSWORD|PWD/.test(name)),
    );
    expect(passwords.length).toBe(5);
    for (const [name, value] of passwords) expect(value, name).toMatch(/^\$\{[A-Z_]+:\?/);
  });

  it('serves the Temporal UI only through the gateway, under the path the gateway serves it at', () => {
    expect(compose['temporal-ui']!.ports).toBeUndefined();
    expect(compose['temporal-ui']!.environment!.TEMPORAL_UI_PUBLIC_PATH).toBe(TEMPORAL_UI_PATH);
    // The UI gets its own settings only, never the whole .env with the agent's keys in it.
    expect((compose['temporal-ui'] as { env_file?: unknown }).env_file).toBeUndefined();
    expect(Object.keys(compose['temporal-ui']!.environment!).filter((k) => /KEY|PASSWORD/.test(k))).toEqual([
      'TEMPORAL_TLS_KEY',
    ]);
    const gateway = compose.gateway!.environment!;
    expect(gateway.TEMPORAL_UI_URL).toBeUndefined();
    const config = loadConfig({
      ...Object.fromEntries(Object.entries(gateway).filter(([key]) => key.startsWith('TEMPORAL_UI'))),
      TEMPORAL_ADDRESS: gateway.TEMPORAL_ADDRESS!,
      PUBLIC_URL: 'https://agent.example.com',
      AGENT_CONFIG: '',
      DATA_DIR: tempDir(),
    });
    expect(config.temporal).toMatchObject({
      ui: 'gateway',
      uiUpstream: `http://temporal-ui:8080`,
      uiUrl: `https://agent.example.com${TEMPORAL_UI_PATH}`,
    });
  });

  it('publishes only the gateway to the network: everything else on 127.0.0.1 or not at all', () => {
    expect(compose.gateway!.ports).toEqual(['3000:3000']);
    for (const name of services.filter((s) => s !== 'gateway'))
      for (const port of compose[name]!.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
    expect(compose.postgresql!.ports).toBeUndefined();
  });

  it('shares state through PostgreSQL with one VAULT_KEY, and no volume between the worker and the gateway', () => {
    const [worker, gateway] = [compose.worker!, compose.gateway!];
    expect(worker.environment!.DATABASE_URL).toBe(gateway.environment!.DATABASE_URL);
    expect(new URL(worker.environment!.DATABASE_URL!.replace(/\$\{[^}]+\}/, 'pw'))).toMatchObject({
      protocol: 'postgres:',
      hostname: 'postgresql',
      pathname: '/agent',
      username: 'agent',
    });
    // Required, so that a missing key stops `docker compose up` instead of each process inventing one.
    expect(worker.environment!.VAULT_KEY).toMatch(/^\$\{VAULT_KEY:\?/);
    expect(worker.environment!.DATABASE_URL).toContain('${AGENT_DB_PASSWORD:?');
    expect(gateway.environment!.VAULT_KEY).toBe(worker.environment!.VAULT_KEY);
    // The same for the gateway's seal, which the worker checks on every message, decision and answer.
    expect(worker.environment!.GATEWAY_KEY).toMatch(/^\$\{GATEWAY_KEY:\?/);
    expect(gateway.environment!.GATEWAY_KEY).toBe(worker.environment!.GATEWAY_KEY);
    for (const service of [worker, gateway]) expect(service.environment!.VAULT_PATH).toBeUndefined();
    const mounted = (service: Service) => (service.volumes ?? []).map((v) => v.split(':')[0]);
    // Not even their Temporal certificates: each holds its own.
    expect(mounted(worker).filter((v) => mounted(gateway).includes(v))).toEqual([]);
    expect(worker.volumes).toContain('worker-certs:/certs:ro');
    expect(gateway.volumes).toContain('gateway-certs:/certs:ro');
    expect(Object.keys(file.volumes).sort()).toEqual([
      'gateway-certs',
      'grafana-data',
      'jobs-certs',
      'postgres-data',
      'prometheus-data',
      'temporal-certs',
      'ui-certs',
      'worker-certs',
      'worker-data',
    ]);
  });
});

describe('Temporal behind mTLS', () => {
  const certs = '/certs';
  /** The certificate volume a service mounts at /certs (read-only), if any. */
  const certVolume = (service: Service) =>
    (service.volumes ?? []).find((v) => v.endsWith(`:${certs}:ro`))?.split(':')[0];

  it('lets only holders of a certificate of its own CA reach Temporal: every client is given one', () => {
    const server = compose.temporal!.environment!;
    expect(server).toMatchObject({
      TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
      TEMPORAL_TLS_FRONTEND_CERT: `${certs}/server.pem`,
      TEMPORAL_TLS_CLIENT1_CA_CERT: `${certs}/ca.pem`,
      TEMPORAL_TLS_SERVER_CA_CERT: `${certs}/ca.pem`,
      TEMPORAL_TLS_FRONTEND_SERVER_NAME: 'temporal',
      TEMPORAL_TLS_INTERNODE_SERVER_NAME: 'temporal',
    });
    expect(compose.temporal!.depends_on!['temporal-certs']).toEqual({
      condition: 'service_completed_successfully',
    });
    // Each client its own certificate, in a volume only it mounts; the server's key and the CA stay with the server.
    const volumes = Object.fromEntries(
      ['temporal', 'temporal-namespace', 'temporal-ui', 'worker', 'gateway'].map((name) => [
        name,
        certVolume(compose[name]!),
      ]),
    );
    expect(volumes).toEqual({
      temporal: 'temporal-certs',
      'temporal-namespace': 'jobs-certs',
      'temporal-ui': 'ui-certs',
      worker: 'worker-certs',
      gateway: 'gateway-certs',
    });
    const mountedBy = (volume: string) =>
      Object.entries(compose).filter(([, service]) =>
        (service.volumes ?? []).some((v) => v.startsWith(`${volume}:`)),
      );
    for (const volume of Object.values(volumes))
      expect(
        mountedBy(volume!)
          .map(([name]) => name)
          .sort(),
        volume,
      ).toEqual(['temporal-certs', Object.keys(volumes).find((name) => volumes[name] === volume)!].sort());
    // The job writes each client volume it mounts (at /out/<volume>), one certificate per service.
    const job = compose['temporal-certs']!;
    for (const volume of ['worker-certs', 'gateway-certs', 'ui-certs', 'jobs-certs'])
      expect(job.volumes).toContain(`${volume}:/out/${volume}`);
    expect(job.command!.join('\n')).toContain('for dir in /out/*-certs; do');
    for (const name of ['worker', 'gateway']) {
      // The Temporal settings as the process reads them (the rest needs .env's values).
      const temporal = Object.fromEntries(
        Object.entries(compose[name]!.environment!).filter(([key]) => key.startsWith('TEMPORAL_')),
      );
      const config = loadConfig({ ...temporal, AGENT_CONFIG: '', DATA_DIR: tempDir() });
      expect(config.temporal.tls, name).toEqual({
        certPath: `${certs}/client.pem`,
        keyPath: `${certs}/client.key`,
        caPath: `${certs}/ca.pem`,
        serverName: 'temporal',
      });
    }
    expect(compose['temporal-namespace']!.environment).toMatchObject({
      TEMPORAL_TLS_CLIENT_CERT_PATH: `${certs}/client.pem`,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: `${certs}/ca.pem`,
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
    });
    expect(compose['temporal-ui']!.environment).toMatchObject({
      TEMPORAL_TLS_CERT: `${certs}/client.pem`,
      TEMPORAL_TLS_CA: `${certs}/ca.pem`,
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
    });
  });

  it('makes certificates that work together, and only together, for real (openssl, then a TLS handshake)', async () => {
    const dir = tempDir('certs-');
    const bin = tempDir('bin-');
    // The job's one call to the outside world (installing openssl in its image); openssl itself is real.
    writeFileSync(path.join(bin, 'apk'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    // Each client's volume, as the job mounts it at /out/<volume>: a directory here.
    const out = path.join(dir, 'out');
    for (const volume of ['worker-certs', 'gateway-certs', 'ui-certs', 'jobs-certs'])
      mkdirSync(path.join(out, volume), { recursive: true });
    const script = unescape(compose['temporal-certs']!.command!.join('\n'))
      .replace(`cd ${certs}`, `cd ${dir}`)
      .replaceAll('/out/', `${out}/`);
    const run = () =>
      promisify(execFile)('/bin/sh', ['-c', script], {
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
    await run();
    const ca = readFileSync(path.join(dir, 'ca.pem'));
    expect(existsSync(path.join(dir, 'ca.key'))).toBe(false);
    await run(); // again: nothing is replaced
    expect(readFileSync(path.join(dir, 'ca.pem')).equals(ca)).toBe(true);
    const file = (name: string) => readFileSync(path.join(dir, name));
    const clientFile = (volume: string, name: string) => readFileSync(path.join(out, volume, name));
    // One certificate per service, named for it, each in its own volume with the CA; none left beside the server's.
    for (const [volume, cn] of [
      ['worker-certs', 'worker'],
      ['gateway-certs', 'gateway'],
      ['ui-certs', 'ui'],
      ['jobs-certs', 'jobs'],
    ] as const) {
      const cert = new X509Certificate(clientFile(volume, 'client.pem'));
      expect(cert.subject).toBe(`CN=${cn}`);
      expect(cert.verify(new X509Certificate(ca).publicKey)).toBe(true);
      expect(clientFile(volume, 'ca.pem').equals(ca)).toBe(true);
    }
    expect(existsSync(path.join(dir, 'client.key'))).toBe(false);
    expect(new X509Certificate(clientFile('worker-certs', 'client.pem')).serialNumber).not.toBe(
      new X509Certificate(clientFile('gateway-certs', 'client.pem')).serialNumber,
    );
    const server = new X509Certificate(file('server.pem'));
    expect(server.subjectAltName).toContain('DNS:temporal');
    expect(server.verify(new X509Certificate(ca).publicKey)).toBe(true);

    const listener = tls.createServer({
      cert: file('server.pem'),
      key: file('server.key'),
      ca,
      requestCert: true,
      rejectUnauthorized: true,
    });
    listener.on('secureConnection', (socket) => socket.end('ok'));
    listener.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as { port: number }).port;
    const handshake = (options: tls.ConnectionOptions) =>
      new Promise<string>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port, servername: 'temporal', ca, ...options }, () =>
          socket.once('data', (data) => resolve(String(data))),
        );
        socket.on('error', (error) => resolve(`refused: ${error.message}`));
        socket.on('end', () => resolve('closed'));
      });
    try {
      // The worker, the gateway, the UI and the jobs (each its own certificate) and the server's own parts get in.
      for (const volume of ['worker-certs', 'gateway-certs', 'ui-certs', 'jobs-certs'])
        expect(
          await handshake({ cert: clientFile(volume, 'client.pem'), key: clientFile(volume, 'client.key') }),
          volume,
        ).toBe('ok');
      expect(await handshake({ cert: file('server.pem'), key: file('server.key') })).toBe('ok');
      // Anyone else does not: no certificate, or one of another CA.
      expect(await handshake({})).not.toBe('ok');
      const other = tempDir('other-');
      await promisify(execFile)('openssl', [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=intruder',
        '-keyout',
        path.join(other, 'k.pem'),
        '-out',
        path.join(other, 'c.pem'),
      ]);
      expect(
        await handshake({
          cert: readFileSync(path.join(other, 'c.pem')),
          key: readFileSync(path.join(other, 'k.pem')),
        }),
      ).not.toBe('ok');
      // A client that checks the name refuses a server certificate for another name.
      expect(
        await handshake({
          cert: clientFile('worker-certs', 'client.pem'),
          key: clientFile('worker-certs', 'client.key'),
          servername: 'evil',
        }),
      ).toMatch(/^refused/);
    } finally {
      listener.close();
    }
  });
});

describe('the agent-database job against a real PostgreSQL', () => {
  let server: TestPostgres;
  let vault: PgVault | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await vault?.close();
    await server?.stop();
  });

  it('creates the agent user and its database, again without harm, and the vault migrates in it', async () => {
    const job = compose['agent-database']!;
    expect(job.image).toBe(compose.postgresql!.image);
    const url = new URL(server.url);
    const env = {
      ...process.env,
      ...job.environment,
      PGHOST: url.hostname,
      PGPORT: url.port,
      PGUSER: url.username,
      PGPASSWORD: url.password,
      AGENT_DB_PASSWORD: 'agent-db-secret',
    };
    const script = unescape(job.command!.join('\n'));
    for (let run = 0; run < 2; run++) await promisify(execFile)('/bin/sh', ['-c', script], { env });
    const agent = (password: string) => `postgres://agent:${password}@${url.hostname}:${url.port}/agent`;
    const refused = new PgVault(agent('wrong'), Buffer.alloc(32, 1));
    await expect(refused.ready()).rejects.toThrow(/password authentication failed/);
    await refused.close();
    vault = new PgVault(agent('agent-db-secret'), Buffer.alloc(32, 1));
    // As the agent user, not a superuser: it owns its database, so it can create the vault's tables.
    await vault.ready();
    await vault.put('alice', 'acme', { accessToken: 'x' }, null);
    expect(await vault.has('alice', 'acme')).toBe(true);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('builds with dev dependencies, then runs on Node 24 with production dependencies only', () => {
    expect(stages).toHaveLength(2);
    for (const stage of stages) expect(stage).toMatch(/^node:24/);
    const [build, run] = stages as [string, string];
    expect(build).toContain('npm ci --no-audit');
    expect(build).toContain('npm run build');
    expect(run).toContain('npm ci --omit=dev');
    expect(run).toContain('COPY --from=build /app/dist ./dist');
  });

  it('copies every runtime folder and the build configuration into the build stage', () => {
    // Every folder the build compiles, read from the build configuration, so a new one cannot be forgotten.
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    expect(build.include).toContain('infra');
    for (const folder of build.include) expect(stages[0]).toContain(`COPY ${folder} ./${folder}`);
    expect(stages[0]).toContain('COPY tsconfig.json tsconfig.build.json ./');
  });

  it('prebuilds the workflow bundle from the sources with the compiled script and points workers at it', () => {
    expect(stages[0]).toContain('node dist/scripts/bundle-workflows.js dist/workflow-bundle.js workflows');
    expect(stages[1]).toContain('WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js');
  });

  it('runs compiled JavaScript as the unprivileged node user', () => {
    expect(stages[1]).toContain('USER node');
    expect(stages[1]).toContain('CMD ["node", "dist/gateways/main.js"]');
    expect(dockerfile).not.toMatch(/\btsx\b/);
  });
});

/**
 * The production shape without Docker: the Temporal server docker-compose.yml pins, built from the Go module proxy
 * (scripts/temporal-server/build.sh, cached between runs), on a real PostgreSQL with SQL visibility, set up by the
 * commands compose's own jobs run (read from docker-compose.yml, so the two cannot drift) and configured by the
 * server image's embedded template from the `temporal` service's own environment. What is changed is only where
 * things are: hostnames become 127.0.0.1, container ports free ones (below 32768: the SQL membership table stores
 * ports as SMALLINT), /certs a temp dir. Each rewrite must find its text, so a compose change fails here loudly.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { parse } from 'yaml';
import { tempDir } from './config';
import type { TestPostgres } from './postgres';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  configs: Record<string, { content: string }>;
}

export function readCompose(): ComposeFile {
  return parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;
}

/** Compose's variable interpolation: `${X}`, `${X:-default}`, `${X:+alternative}`, `${X:?error}` and `$$`. */
export function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[?+-])([^}]*))?\}/g,
    (whole, name: string, op: string | undefined, arg: string | undefined) => {
      if (whole === '$$') return '$';
      const value = vars[name];
      const set = value !== undefined && value !== '';
      if (op === ':?') {
        if (!set) throw new Error(`compose needs ${name}: ${arg}`);
        return value!;
      }
      if (op === ':-') return set ? value! : (arg ?? '');
      if (op === ':+') return set ? (arg ?? '') : '';
      return value ?? '';
    },
  );
}

/** Replaces text that must be there: a compose file that no longer has it fails the suite, naming it. */
function rewrite(text: string, from: string | RegExp, to: string, where: string): string {
  const found = typeof from === 'string' ? text.includes(from) : from.test(text);
  if (!found) throw new Error(`docker-compose.yml changed: ${where} no longer has ${String(from)}`);
  return typeof from === 'string' ? text.replaceAll(from, to) : text.replace(from, to);
}

/** A free TCP port below 32768 on loopback. */
export async function freeLowPort(taken = new Set<number>()): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
}

/** The cache directory holding temporal-server, temporal-sql-tool and the schemas (built once, ~3 min). */
export async function temporalServerBuild(): Promise<string> {
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts/temporal-server/build.sh')], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim().split('\n').at(-1)!;
}

export type ServerService = 'frontend' | 'history' | 'matching' | 'worker';
const SERVICES: ServerService[] = ['frontend', 'history', 'matching', 'worker'];

class ServerProcess {
  output = '';
  constructor(readonly child: ChildProcess) {
    child.stdout!.on(
      'data',
      (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-200_000)),
    );
    child.stderr!.on(
      'data',
      (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-200_000)),
    );
  }
  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill(signal);
    await exited;
  }
}

/**
 * One deployment's Temporal: PostgreSQL role and databases, certificates, the server (one process, or one per
 * service), the namespace, the agent's database; then the environment compose gives the worker and the gateway.
 */
export class RealTemporal {
  readonly compose = readCompose();
  readonly certs = tempDir('real-temporal-certs-');
  private readonly bin = tempDir('real-temporal-bin-');
  private readonly dynamicConfig = path.join(tempDir('real-temporal-config-'), 'agent.yaml');
  private readonly vars: Record<string, string>;
  private readonly ports: Record<string, number> = {};
  private readonly processes = new Map<string, ServerProcess>();
  private readonly pgPort: string;

  private constructor(
    private readonly build: string,
    private readonly postgres: TestPostgres,
  ) {
    this.pgPort = new URL(postgres.url).port;
    this.vars = {
      POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
      AGENT_DB_PASSWORD: randomBytes(12).toString('hex'),
      VAULT_KEY: randomBytes(32).toString('base64'),
      GATEWAY_KEY: randomBytes(32).toString('base64'),
    };
    symlinkSync(path.join(build, 'bin/temporal-sql-tool'), path.join(this.bin, 'temporal-sql-tool'));
    const cli = process.env.TEMPORAL_CLI_PATH;
    if (!cli)
      throw new Error('TEMPORAL_CLI_PATH is not set (.ci/run sets it; the namespace job runs the CLI)');
    symlinkSync(cli, path.join(this.bin, 'temporal'));
    // The job's one call to the outside world (installing openssl in its image); openssl itself is real.
    writeFileSync(path.join(this.bin, 'apk'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(this.dynamicConfig, this.compose.configs['temporal-dynamic-config']!.content);
  }

  static async create(postgres: TestPostgres): Promise<RealTemporal> {
    const build = await temporalServerBuild();
    const temporal = new RealTemporal(build, postgres);
    const taken = new Set<number>();
    for (const service of SERVICES) {
      temporal.ports[`${service}Grpc`] = await freeLowPort(taken);
      temporal.ports[`${service}Membership`] = await freeLowPort(taken);
    }
    temporal.ports.frontendHttp = await freeLowPort(taken);
    // The postgres image makes POSTGRES_USER a superuser: so does this.
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      await client.query(
        `CREATE ROLE temporal LOGIN SUPERUSER PASSWORD '${temporal.vars.POSTGRES_PASSWORD}'`,
      );
    } finally {
      await client.end();
    }
    // Each client's volume (mounted at /out/<volume> in the job) is a directory of its own here.
    for (const volume of temporal.clientCertVolumes())
      mkdirSync(path.join(temporal.certs, 'out', volume), { recursive: true });
    await temporal.job('temporal-certs', (script) =>
      rewrite(
        rewrite(script, 'cd /certs', `cd ${temporal.certs}`, 'temporal-certs'),
        '/out/',
        `${temporal.certs}/out/`,
        'temporal-certs',
      ),
    );
    await temporal.job('agent-database', (script) => script, {
      PGHOST: '127.0.0.1',
      PGPORT: temporal.pgPort,
    });
    return temporal;
  }

  get address(): string {
    return `127.0.0.1:${this.ports.frontendGrpc}`;
  }

  /** The volumes the certificate job writes clients' certificates into (mounted at /out/<volume> there). */
  clientCertVolumes(): string[] {
    return (this.compose.services['temporal-certs']!.volumes ?? [])
      .map((v) => v.split(':'))
      .filter(([, mount]) => mount?.startsWith('/out/'))
      .map(([volume]) => volume!);
  }

  /** `/certs/` as `service` sees it: the directory of the volume it mounts there (its own certificates). */
  private withCerts(value: string, service = 'temporal'): string {
    const mounted = (this.compose.services[service]?.volumes ?? [])
      .map((v) => v.split(':'))
      .find(([, mount]) => mount === '/certs')?.[0];
    const dir = !mounted || mounted === 'temporal-certs' ? this.certs : path.join(this.certs, 'out', mounted);
    return value.replaceAll('/certs/', `${dir}/`);
  }

  /** A one-shot job of compose's, its shell script run here with its environment (interpolated, relocated). */
  private async job(
    service: string,
    adapt: (script: string) => string,
    extraEnv: Record<string, string> = {},
  ): Promise<string> {
    const spec = this.compose.services[service]!;
    const script = adapt(interpolate(spec.command!.join('\n'), this.vars));
    const env = Object.fromEntries(
      Object.entries(spec.environment ?? {}).map(([key, value]) => [
        key,
        this.withCerts(interpolate(value, this.vars), service),
      ]),
    );
    const { stdout, stderr } = await run('/bin/sh', ['-c', script], {
      env: { ...process.env, PATH: `${this.bin}:${process.env.PATH}`, ...env, ...extraEnv },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(
        `compose job ${service} failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`,
      );
    });
    return stdout + stderr;
  }

  /** compose's temporal-schema job: both databases created (or upgraded) to the server's schema. */
  async setupSchema(): Promise<void> {
    await this.job('temporal-schema', (script) =>
      rewrite(
        rewrite(script, '--ep postgresql -p 5432', `--ep 127.0.0.1 -p ${this.pgPort}`, 'temporal-schema'),
        'schemas=/etc/temporal/schema/',
        `schemas=${this.build}/schema/`,
        'temporal-schema',
      ),
    );
  }

  /** compose's temporal-namespace job: waits for the server's health, then makes `default` if it is missing. */
  async createNamespace(): Promise<void> {
    await this.job('temporal-namespace', (script) =>
      rewrite(
        script,
        /export TEMPORAL_ADDRESS=.*\n/,
        `export TEMPORAL_ADDRESS=${this.address}\n`,
        'temporal-namespace',
      ),
    );
  }

  /** Drops both of Temporal's databases: the next setupSchema() makes a fresh deployment. */
  async dropDatabases(): Promise<void> {
    const client = new pg.Client({ connectionString: this.postgres.url });
    await client.connect();
    try {
      for (const db of ['temporal', 'temporal_visibility'])
        await client.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }

  /** The `temporal` service's environment, where this machine has things. */
  private serverEnv(): Record<string, string> {
    const given = this.compose.services.temporal!.environment!;
    const env = Object.fromEntries(
      Object.entries(given).map(([key, value]) => [key, this.withCerts(interpolate(value, this.vars))]),
    );
    const expect = (key: string, value: string) => {
      if (env[key] !== value)
        throw new Error(`docker-compose.yml changed: temporal's ${key} is no longer ${value}`);
    };
    expect('POSTGRES_SEEDS', 'postgresql');
    expect('DB_PORT', '5432');
    expect('BIND_ON_IP', '0.0.0.0');
    expect('DYNAMIC_CONFIG_FILE_PATH', 'config/dynamicconfig/agent.yaml');
    return {
      ...env,
      POSTGRES_SEEDS: '127.0.0.1',
      DB_PORT: this.pgPort,
      BIND_ON_IP: '127.0.0.1',
      DYNAMIC_CONFIG_FILE_PATH: this.dynamicConfig,
      FRONTEND_GRPC_PORT: String(this.ports.frontendGrpc),
      FRONTEND_HTTP_PORT: String(this.ports.frontendHttp),
      FRONTEND_MEMBERSHIP_PORT: String(this.ports.frontendMembership),
      HISTORY_GRPC_PORT: String(this.ports.historyGrpc),
      HISTORY_MEMBERSHIP_PORT: String(this.ports.historyMembership),
      MATCHING_GRPC_PORT: String(this.ports.matchingGrpc),
      MATCHING_MEMBERSHIP_PORT: String(this.ports.matchingMembership),
      WORKER_GRPC_PORT: String(this.ports.workerGrpc),
      WORKER_MEMBERSHIP_PORT: String(this.ports.workerMembership),
      LOG_LEVEL: 'warn',
    };
  }

  /** `temporal-server start` as the image's entrypoint runs it: all services in one process, or one of them. */
  start(service?: ServerService): void {
    const name = service ?? 'all';
    if (this.processes.has(name)) throw new Error(`the server's ${name} already runs`);
    const child = spawn(
      path.join(this.build, 'bin/temporal-server'),
      ['start', ...(service ? ['--service', service] : [])],
      { env: { PATH: process.env.PATH ?? '', ...this.serverEnv() }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.processes.set(name, new ServerProcess(child));
  }

  /** The four services as four processes (frontend, history, matching, worker). */
  startEach(): void {
    for (const service of SERVICES) this.start(service);
  }

  async kill(service?: ServerService, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const name = service ?? 'all';
    await this.processes.get(name)?.kill(signal);
    this.processes.delete(name);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.processes.keys()].map((name) => this.processes.get(name)!.kill('SIGKILL')));
    this.processes.clear();
  }

  /** The server's own log (the tail), for a failure's message. */
  log(): string {
    return [...this.processes.entries()]
      .map(([name, p]) => `--- ${name}\n${p.output.slice(-4000)}`)
      .join('\n');
  }

  /**
   * compose's environment for the worker or the gateway, pointed here. Tests add their own policy and model
   * (testEnv) and, for the gateway, how people sign in (what .env would say).
   */
  appEnv(service: 'worker' | 'gateway'): Record<string, string> {
    const given = this.compose.services[service]!.environment!;
    const env: Record<string, string> = {};
    for (const [key, raw] of Object.entries(given)) {
      let value = this.withCerts(interpolate(raw, this.vars), service);
      if (value.includes('temporal:7233'))
        value = rewrite(value, 'temporal:7233', this.address, `${service} ${key}`);
      if (value.includes('@postgresql:5432/'))
        value = rewrite(value, '@postgresql:5432/', `@127.0.0.1:${this.pgPort}/`, `${service} ${key}`);
      env[key] = value;
    }
    mkdirSync(path.join(this.certs), { recursive: true });
    return env;
  }
}

/**
 * Real worker and gateway processes for end-to-end and restart tests: started the way `npm run worker`
 * and `npm run gateway` start them (one Node process each, so SIGKILL really kills it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { BROWSER_REFUSED_PORTS } from '../../infra/config';

const ROOT = path.resolve(__dirname, '../..');

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * A free port among those every browser refuses (the embedded server's UI and HTTP API must listen on one),
 * other than `except` (a port taken for something else in the same test).
 */
export async function freeBrowserRefusedPort(except: number[] = []): Promise<number> {
  for (const port of BROWSER_REFUSED_PORTS) {
    if (except.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('every port browsers refuse is taken on this machine');
}

export class ManagedProcess {
  private child: ChildProcess | undefined;
  output = '';

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Starts the process and resolves once `ready()` holds (or rejects when it exits first). */
  async start(ready: (output: string) => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    // TypeScript runs under tsx, as `npm run worker` does; compiled JavaScript (dist/) runs on node alone.
    const entry = path.join(ROOT, this.entry);
    const args = entry.endsWith('.js') ? [entry] : ['--import', 'tsx', entry];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const collect = (chunk: Buffer) => (this.output += chunk.toString());
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null)
        throw new Error(`${this.name} exited with ${child.exitCode}:\n${this.output}`);
      if (await ready(this.output)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${this.name} did not become ready:\n${this.output}`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }
}

export function workerProcess(env: Record<string, string>): ManagedProcess {
  return new ManagedProcess('worker', 'workers/main.ts', env);
}

export function gatewayProcess(env: Record<string, string>): ManagedProcess {
  return new ManagedProcess('gateway', 'gateways/main.ts', env);
}

export const workerReady = (output: string): boolean => output.includes('"worker started"');

export const gatewayReady = (port: number) => async (): Promise<boolean> => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
  } catch {
    return false;
  }
};

/** Host PIDs of the processes whose command line holds `marker` (NUL-separated arguments). */
export function pidsWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false; // exited meanwhile
      }
    });
}

/** How many processes on this machine have `marker` in their command line. */
export function processesWith(marker: string): number {
  return pidsWith(marker).length;
}

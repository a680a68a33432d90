/**
 * shell_execute's commands start in a small launcher process, not in the worker (why: shell-launcher-main.ts).
 * One launcher per worker process, started by the sandbox probe while the worker is still small, and started
 * again by the next command if it ever ends. A command the launcher took with it is reported, never retried.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ToolRunResult } from '../types';
import type { ShellSandbox } from './sandbox';
import type { KillReason } from './shell';

export interface ShellRun {
  command: string;
  timeoutSeconds: number;
  cwd: string;
  sandbox: ShellSandbox;
}

export type LauncherRequest = { type: 'run'; id: number; input: ShellRun } | { type: 'abort'; id: number };
export type LauncherReply =
  { type: 'ready' } | { type: 'result'; id: number; result: ToolRunResult; killed?: KillReason };

/** A run's result, and why it was killed if it was. */
type Settle = (result: ToolRunResult, killed?: KillReason) => void;

interface Launcher {
  process: ChildProcess;
  ready: Promise<void>;
  /** Runs sent to this launcher and not answered yet, by id. */
  pending: Map<number, Settle>;
  /** Callers waiting on this launcher: while there are any, its channel keeps the worker's event loop alive. */
  waiting: number;
}

function hold(launcher: Launcher): () => void {
  if (launcher.waiting++ === 0) launcher.process.channel?.ref();
  return () => {
    if (--launcher.waiting === 0) launcher.process.channel?.unref();
  };
}

const ENTRY = path.join(__dirname, `shell-launcher-main${path.extname(__filename)}`);

let current: Launcher | undefined;
let nextId = 1;

function startLauncher(): Launcher {
  const child = fork(ENTRY, [], {
    // What starting a command needs and nothing more: the worker's secrets stay out of this process.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    // TypeScript (npm run worker, tests) is loaded as the worker's own code is; compiled JavaScript needs nothing.
    execArgv: ENTRY.endsWith('.ts') ? ['--require', require.resolve('tsx/cjs')] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, Settle>();
  const ended = (why: string) => {
    if (current?.process === child) current = undefined;
    for (const settle of pending.values())
      settle(
        {
          status: 'error',
          content: `the shell launcher ended (${why}) while the command ran; it may have run in part`,
        },
        'launcher_ended',
      );
    pending.clear();
  };
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: LauncherReply) => {
      if (message.type === 'ready') resolve();
      else {
        pending.get(message.id)?.(message.result, message.killed);
        pending.delete(message.id);
      }
    });
    child.on('error', (error) => {
      reject(error);
      ended(error.message);
    });
    child.on('exit', (code, signal) => {
      reject(new Error(`the shell launcher exited before it was ready (${signal ?? `exit code ${code}`})`));
      ended(signal ?? `exit code ${code}`);
    });
  });
  ready.catch(() => {});
  // An idle launcher does not keep the worker alive; its channel is held only while a run waits (`hold`).
  child.unref();
  child.channel?.unref();
  return { process: child, ready, pending, waiting: 0 };
}

/** The running launcher, started now if there is none (the sandbox probe calls this at worker start). */
export function shellLauncher(): Launcher {
  if (!current || !current.process.connected || current.process.exitCode !== null) current = startLauncher();
  return current;
}

/** Runs a command as `runShell` does, in the launcher; an abort kills the command's whole process tree. */
export async function runShellInLauncher(
  input: ShellRun & { signal?: AbortSignal; onKill?: (reason: KillReason) => void },
): Promise<ToolRunResult> {
  const { signal, onKill, ...run } = input;
  const launcher = shellLauncher();
  const release = hold(launcher);
  try {
    await launcher.ready;
    return await send(launcher, run, signal, onKill);
  } catch (error) {
    return { status: 'error', content: `could not start the command: ${(error as Error).message}` };
  } finally {
    release();
  }
}

function send(
  launcher: Launcher,
  run: ShellRun,
  signal: AbortSignal | undefined,
  onKill: ((reason: KillReason) => void) | undefined,
): Promise<ToolRunResult> {
  const id = nextId++;
  return new Promise<ToolRunResult>((resolve) => {
    const abort = () => launcher.process.connected && launcher.process.send({ type: 'abort', id });
    launcher.pending.set(id, (result, killed) => {
      signal?.removeEventListener('abort', abort);
      if (killed) onKill?.(killed);
      resolve(result);
    });
    launcher.process.send({ type: 'run', id, input: run } satisfies LauncherRequest, (error) => {
      if (!error) return;
      launcher.pending.delete(id);
      resolve({ status: 'error', content: `could not start the command: ${error.message}` });
    });
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
  });
}

/**
 * shell_execute: `sh -c` in the session's own working directory, inside the bubblewrap sandbox (unless the
 * policy turned it off), with a timeout and an output cap; the whole process tree dies with the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { lchownSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { ToolRunResult } from '../types';
import { OUTPUT_CAP, capOutput } from './output-cap';
import { endSandbox, identifyInit, type SandboxInit } from './sandbox-init';
import {
  INFO_FD,
  SANDBOX_FIX,
  SECCOMP_FD,
  bwrapArgs,
  withOomScore,
  runsAsRoot,
  type ShellSandbox,
} from './sandbox';
import { sandboxUid } from './sandbox-uids';
import { keyringFilter } from './sandbox-seccomp';
import { startEgressProxy, type EgressProxy } from './egress-proxy';

const KEYRING_FILTER = keyringFilter();

export function sessionWorkdir(dataDir: string, sessionId: string): string {
  const safe = sessionId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 200);
  const dir = path.join(dataDir, 'workdirs', safe);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Hands the working directory (and what earlier, unsandboxed runs left in it) to the sandbox's uid. */
function ownWorkdir(dir: string, uid: number): void {
  if (statSync(dir).uid === uid) return;
  const walk = (entry: string) => {
    lchownSync(entry, uid, uid);
    if (lstatSync(entry).isDirectory()) for (const name of readdirSync(entry)) walk(path.join(entry, name));
  };
  walk(dir);
}

function start(
  command: string,
  cwd: string,
  timeoutSeconds: number,
  sandbox: ShellSandbox,
  egress: EgressProxy | undefined,
  uid: number | undefined,
): ChildProcess {
  if (sandbox.status.kind === 'bwrap') {
    if (uid !== undefined) ownWorkdir(cwd, uid);
    // bwrap gets no environment either: its own /proc/1/environ is readable from inside.
    const child = spawn(
      ...withOomScore(
        sandbox.status.bwrap,
        bwrapArgs({ command, workdir: cwd, network: sandbox.network, timeoutSeconds, uid, egress }),
      ),
      { cwd: '/', env: {}, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'], detached: true },
    );
    // bwrap reads the filter to its end before it starts the command. A bwrap that ended first (it could not
    // build the sandbox) says why on stderr and in its exit code; the broken pipe adds nothing.
    const filter = child.stdio[SECCOMP_FD] as Writable;
    filter.on('error', () => {});
    filter.end(KEYRING_FILTER);
    return child;
  }
  return spawn(...withOomScore('sh', ['-c', command]), {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

/** Why a command was killed: its timeout, a Stop or cancelled activity, or its launcher ended under it. */
export type KillReason = 'timeout' | 'cancelled' | 'launcher_ended';

export async function runShell(input: {
  command: string;
  timeoutSeconds: number;
  cwd: string;
  sandbox: ShellSandbox;
  signal?: AbortSignal;
  /** Told once when the command is killed, and why (the worker counts sandbox kills). */
  onKill?: (reason: KillReason) => void;
}): Promise<ToolRunResult> {
  if (input.sandbox.status.kind === 'unavailable')
    return {
      status: 'error',
      content: `shell_execute is refused: the sandbox cannot start on this worker (${input.sandbox.status.reason}). To fix: ${SANDBOX_FIX}.`,
    };
  // "full" with the sandbox: out through an egress proxy that applies the address policy, never the host's network.
  const bridged = input.sandbox.status.kind === 'bwrap' && input.sandbox.network === 'full';
  let egress: EgressProxy | undefined;
  let child: ChildProcess;
  try {
    // A worker running as root runs each conversation's commands under that conversation's own uid.
    const uid = input.sandbox.status.kind === 'bwrap' && runsAsRoot() ? sandboxUid(input.cwd) : undefined;
    if (bridged)
      egress = await startEgressProxy(input.sandbox.egress ?? { allowHosts: [], denyHosts: [] }, { uid });
    child = start(input.command, input.cwd, input.timeoutSeconds, input.sandbox, egress, uid);
  } catch (error) {
    await egress?.close();
    return { status: 'error', content: `could not start the command: ${(error as Error).message}` };
  }
  try {
    return await watch(child, input);
  } finally {
    await egress?.close();
  }
}

function watch(
  child: ChildProcess,
  input: {
    timeoutSeconds: number;
    signal?: AbortSignal | undefined;
    onKill?: ((reason: KillReason) => void) | undefined;
  },
): Promise<ToolRunResult> {
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    let killed = false;
    let init: SandboxInit | undefined;
    // Killing the sandbox's PID 1 kills every process inside (unsandboxed: the process group). Its PID cannot
    // belong to anyone else yet: bwrap, not yet reaped, still waits for it.
    const killTree = (reason?: KillReason) => {
      if (!killed && reason) input.onKill?.(reason);
      killed = true;
      try {
        if (init) process.kill(init.pid, 'SIGKILL');
        else process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    let info = '';
    child.stdio[INFO_FD]?.on('data', (chunk: Buffer) => {
      info += chunk.toString('utf8');
      const pid = /"child-pid":\s*(\d+)/.exec(info)?.[1];
      if (pid === undefined || init) return;
      init = identifyInit(Number(pid));
      // A kill that came before bwrap said who PID 1 is reached only bwrap: finish the job.
      if (killed) killTree();
    });
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.length <= OUTPUT_CAP) return;
      // Past the cap nothing more is read: the command's next write fails instead of filling memory.
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const timer = setTimeout(() => {
      timedOut = true;
      killTree('timeout');
    }, input.timeoutSeconds * 1000);
    const cancelled = () => killTree('cancelled');
    if (input.signal?.aborted) cancelled();
    input.signal?.addEventListener('abort', cancelled);
    const finish = (result: ToolRunResult) => {
      clearTimeout(timer);
      input.signal?.removeEventListener('abort', cancelled);
      resolve(result);
    };
    child.on('error', (error) =>
      finish({ status: 'error', content: `could not start the command: ${error.message}` }),
    );
    child.on('close', (code, signal) => {
      const body = capOutput(output) || '(no output)';
      const result: ToolRunResult = timedOut
        ? {
            status: 'error',
            content: `timed out after ${input.timeoutSeconds}s and was killed. Output so far:\n${body}`,
          }
        : { status: code === 0 ? 'ok' : 'error', content: `exit code ${code ?? signal}\n${body}` };
      // The run is over only when nothing of it runs any more.
      void (init ? endSandbox(init) : Promise.resolve()).then(() => finish(result));
    });
  });
}

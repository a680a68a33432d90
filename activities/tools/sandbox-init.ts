/**
 * The sandbox's PID 1 as the host sees it. Killing it kills every process in the sandbox; once it is gone
 * or a zombie, the kernel has killed them all, so a run ends only then.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SandboxInit {
  pid: number;
  /** From /proc: tells this process from a later one that got the same PID. */
  startTime: string;
}

function stat(pid: number): { state: string; startTime: string } | undefined {
  try {
    // Fields after the command name (which may hold spaces): state is field 3, start time field 22.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)!.split(' ');
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

/** Called while bwrap still waits for its child, so the PID is that child's. */
export function identifyInit(pid: number): SandboxInit | undefined {
  const found = stat(pid);
  return found && { pid, startTime: found.startTime };
}

function running(init: SandboxInit): boolean {
  const now = stat(init.pid);
  return !!now && now.startTime === init.startTime && now.state !== 'Z' && now.state !== 'X';
}

/** Kills PID 1 if it still runs (bwrap exits before its own PID 1 does) and waits until it is dead. */
export async function endSandbox(init: SandboxInit, waitMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + waitMs; Date.now() < deadline && running(init); await sleep(10)) {
    try {
      process.kill(init.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

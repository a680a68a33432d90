/**
 * The shell launcher process (shell-launcher.ts starts it): runs each shell_execute command the worker sends
 * over IPC with `runShell`, and answers with its result. It exists because starting a process copies the
 * starting process's page tables: from a worker holding hundreds of cached workflows (1 GB) each start blocked
 * the worker's event loop for ~35 ms; from this small process it takes ~1 ms.
 *
 * When the worker goes (even SIGKILLed) the IPC channel closes: every running command is killed and this
 * process ends, as the commands did when bwrap was the worker's own child (`--die-with-parent`).
 */
import { writeFileSync } from 'node:fs';
import type { ToolRunResult } from '../types';
import { closeInheritedDescriptors } from './inherited-descriptors';
import { SANDBOX_LIMITS } from './sandbox';
import { runShell, type KillReason } from './shell';
import type { LauncherRequest, LauncherReply } from './shell-launcher';

// Before any command starts: what this process inherited from the worker's own starter is not the commands'.
closeInheritedDescriptors();
// A command's memory is bounded per process (sandbox.ts), not in total: many processes can still run the machine
// (or the worker's container) out of memory. Then the kernel ends the process with the highest badness: a
// command's (each starts at SANDBOX_LIMITS.commandOomScore, shell.ts), then this launcher (which the worker
// replaces), rather than the worker, the Temporal server or the database. Raising one's own score needs no
// privilege; lowering it again does (below what a root launcher set) or cannot be done from a sandbox (its /proc
// is read-only).
preferredByOomKiller();

function preferredByOomKiller(): void {
  try {
    writeFileSync('/proc/self/oom_score_adj', String(SANDBOX_LIMITS.launcherOomScore));
  } catch {
    // Not Linux (the sandbox does not run there either), or /proc read-only: nothing more to do.
  }
}

const running = new Map<number, AbortController>();

function reply(message: LauncherReply): void {
  // A result that finds the worker gone has no one to go to (the worker's death already ended the command).
  if (process.connected) process.send?.(message, undefined, {}, () => {});
}

process.on('message', (message: LauncherRequest) => {
  if (message.type === 'abort') {
    running.get(message.id)?.abort();
    return;
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  let killed: KillReason | undefined;
  void runShell({ ...message.input, signal: controller.signal, onKill: (reason) => (killed = reason) })
    .catch((error: unknown): ToolRunResult => ({
      status: 'error',
      content: `could not start the command: ${(error as Error).message}`,
    }))
    .then((result) => {
      running.delete(message.id);
      reply({ type: 'result', id: message.id, result, ...(killed ? { killed } : {}) });
    });
});

process.on('disconnect', () => {
  for (const controller of running.values()) controller.abort();
  // The aborts kill each sandbox's PID 1 at once; this process ends once they are reaped, or in 2 s regardless.
  setTimeout(() => process.exit(0), 2_000);
});

reply({ type: 'ready' });

/**
 * Descriptors a process was started with and that are not close-on-exec pass on to every process it starts.
 * Node opens all of its own close-on-exec and marks low-numbered inherited ones so, but not the rest: a log
 * file a supervisor opened at 200, a job runner's pipe at 251 reach the worker and, through it, the launcher.
 * A sandboxed command must not hold them: it could write into, or read from, something outside the sandbox,
 * whatever its uid. The shell launcher closes them before it starts any command.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;
const FDINFO = '/proc/self/fdinfo';

/** Closes every descriptor above stderr that a started process would inherit; returns their numbers. */
export function closeInheritedDescriptors(): number[] {
  let entries: string[];
  try {
    entries = readdirSync(FDINFO);
  } catch {
    return []; // no /proc: not Linux, where the sandbox does not run either
  }
  const closed: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!(fd > 2)) continue;
    let flags: number;
    try {
      flags = parseInt(/^flags:\s+([0-7]+)/m.exec(readFileSync(`${FDINFO}/${fd}`, 'utf8'))?.[1] ?? '', 8);
    } catch {
      continue; // gone meanwhile (readdir's own descriptor, for one)
    }
    if (Number.isNaN(flags) || flags & O_CLOEXEC) continue;
    try {
      closeSync(fd);
    } catch {
      // Linux frees the descriptor even when close reports an error (EIO on a network file system).
    }
    closed.push(fd);
  }
  return closed;
}

let closedOnce = false;

/**
 * The same, once per process. A worker calls it first thing (workers/run-worker.ts), before its connections and
 * MCP servers open descriptors: done later, a descriptor found inheritable could be closed and its number reused
 * between the check and the close (threads already running open theirs close-on-exec). The MCP pool calls it
 * too, for processes that start servers without a worker.
 */
export function closeInheritedDescriptorsOnce(): void {
  if (closedOnce) return;
  closedOnce = true;
  closeInheritedDescriptors();
}

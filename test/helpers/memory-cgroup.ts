/**
 * A memory cgroup of its own for a test's processes, so a test can run them out of memory without touching the
 * machine: the kernel's OOM killer then acts inside the group alone. Needs root and a writable cgroup file system
 * (v2 with the memory controller, or v1's memory hierarchy).
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  /** Write a pid here to move that process (and what it starts later) into the group. */
  procsFile: string;
  /** How many times the OOM killer ended a process in the group. */
  oomKills(): number;
  remove(): void;
}

const V2 = '/sys/fs/cgroup';
const V1 = '/sys/fs/cgroup/memory';

export function memoryCgroup(name: string, limitBytes: number): MemoryCgroup {
  const v2 =
    existsSync(path.join(V2, 'cgroup.controllers')) &&
    readFileSync(path.join(V2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory');
  const root = v2 ? V2 : V1;
  if (!existsSync(path.join(root, 'cgroup.procs')))
    throw new Error(
      `no memory cgroup hierarchy at ${V2} or ${V1}: this test needs one (Linux, cgroup v1 or v2)`,
    );
  const dir = path.join(root, name);
  try {
    if (v2) writeFileSync(path.join(V2, 'cgroup.subtree_control'), '+memory');
    mkdirSync(dir);
    writeFileSync(path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(limitBytes));
    // No swap either, where the kernel accounts for it: out of memory must mean out of memory.
    if (v2 && existsSync(path.join(dir, 'memory.swap.max')))
      writeFileSync(path.join(dir, 'memory.swap.max'), '0');
  } catch (error) {
    throw new Error(
      `cannot make a memory cgroup at ${dir} (run the tests as root): ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return {
    procsFile: path.join(dir, 'cgroup.procs'),
    oomKills() {
      const events = readFileSync(path.join(dir, v2 ? 'memory.events' : 'memory.oom_control'), 'utf8');
      return Number(/^oom_kill (\d+)/m.exec(events)?.[1] ?? 0);
    },
    remove() {
      try {
        rmdirSync(dir);
      } catch {
        // still has processes (a failed test): the kernel keeps it until they end
      }
    },
  };
}

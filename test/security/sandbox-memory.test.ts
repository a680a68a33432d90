/**
 * Memory is bounded per process (2 GiB), not per command: a command that grows in several processes can still
 * run the worker's machine or container out of memory. Then the kernel's OOM killer picks one process to end,
 * and it must be the command's, not the worker holding every cached conversation (nor the Temporal server or the
 * database beside it). Each run puts a worker-like process, holding memory as a real worker's cache does, in a
 * memory cgroup of its own and runs such a command through shell_execute, with the worker as root and as an
 * unprivileged user. "Lost" means the OOM killer ended the worker.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolRunResult } from '../../activities/types';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { AS_NOBODY, readableCheckout, requireRootFor } from '../helpers/readable-checkout';
import { memoryCgroup } from '../helpers/memory-cgroup';

/** The code the unprivileged worker runs, readable by it wherever this checkout lives (a clone under /root too). */
const ROOT = readableCheckout();
const NOBODY = 65534;
const MiB = 1024 * 1024;
/** What the worker-like process holds beyond Node itself, as a worker holds its cached conversations. */
const WORKER_BALLAST_MIB = 300;
const GROUP_LIMIT_MIB = 800;
/** Four processes of 300 MiB each, every one within the per-process limit, 1.2 GiB together. */
const GREEDY_COMMAND = [
  // First it tries to take itself out of the OOM killer's way, as a command that means harm would.
  'echo -1000 > /proc/self/oom_score_adj',
  'echo 0 > /proc/self/oom_score_adj',
  'echo "score $(cat /proc/self/oom_score_adj)"',
  'pids=""',
  'for i in 1 2 3 4; do perl -e \'$y = ""; for (1..30) { $y .= "b" x (10 * 1024 * 1024); select(undef, undef, undef, 0.02) } sleep 2\' & pids="$pids $!"; done',
  'for p in $pids; do wait $p; echo "status $?"; done',
].join('; ');

function workerScript(dataDir: string): string {
  const module = (file: string) => JSON.stringify(path.join(ROOT, file));
  return `
    const ballast = Buffer.alloc(${WORKER_BALLAST_MIB * MiB}, 1);
    const { executors } = await import(${module('activities/tools/registry.ts')});
    const { probeSandbox } = await import(${module('activities/tools/sandbox-probe.ts')});
    const shell = { status: await probeSandbox('bwrap'), network: 'none' };
    const result = await executors.shell_execute(
      { command: ${JSON.stringify(GREEDY_COMMAND)}, timeout_seconds: 60 },
      { dataDir: ${JSON.stringify(dataDir)}, sessionId: 'session:web:greedy', signal: new AbortController().signal, shell },
    );
    const { shellLauncher } = await import(${module('activities/tools/shell-launcher.ts')});
    const { readFileSync } = await import('node:fs');
    const launcherScore = Number(readFileSync('/proc/' + shellLauncher().process.pid + '/oom_score_adj', 'utf8'));
    process.stdout.write(JSON.stringify({ sandbox: shell.status.kind, uid: process.getuid(), held: ballast.length, launcherScore, result }));
    process.exit(0);`;
}

/** Runs the greedy command from a worker-like process inside a fresh memory cgroup; how the worker ended. */
async function runInTightMemory(as: 'root' | 'nobody') {
  const group = memoryCgroup(`sandbox-oom-${randomBytes(4).toString('hex')}`, GROUP_LIMIT_MIB * MiB);
  const dataDir = tempDir('sandbox-oom-');
  if (as === 'nobody') {
    requireRootFor('The memory row as an unprivileged worker');
    chownSync(dataDir, NOBODY, NOBODY);
    chmodSync(dataDir, 0o700);
  }
  const drop = as === 'nobody' ? AS_NOBODY : [];
  const child = spawn(
    'sh',
    [
      '-c',
      // Into the group first, then (as nobody) the worker: it and everything it starts count against the limit.
      'echo $$ > "$PROCS" && exec "$@"',
      'sh',
      ...drop,
      process.execPath,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      workerScript(dataDir),
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH!, HOME: dataDir, PROCS: group.procsFile },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  const oomKills = group.oomKills();
  group.remove();
  const report =
    code === 0
      ? (JSON.parse(stdout) as {
          sandbox: string;
          uid: number;
          held: number;
          launcherScore: number;
          result: ToolRunResult;
        })
      : undefined;
  return { code, signal, stderr, oomKills, report };
}

describe('a command that runs the worker out of memory', () => {
  it("is what the kernel's OOM killer ends, not the worker", { timeout: 180_000 }, async () => {
    const tally = new Tally();
    for (const as of ['root', 'nobody'] as const) {
      const run = await runInTightMemory(as);
      // What makes the row count: the group really ran out of memory, and the OOM killer ended something.
      expect(
        run.oomKills,
        `${as}: OOM kills in the group (worker ${run.code ?? run.signal}: ${run.stderr.slice(-500)})`,
      ).toBeGreaterThan(0);
      const workerSurvived = run.code === 0;
      if (!workerSurvived) tally.lost++;
      tally.check(
        workerSurvived,
        () => `${as}: the worker ended with ${run.code ?? run.signal}: ${run.stderr.slice(-300)}`,
      );
      if (run.report) {
        expect(run.report.sandbox).toBe('bwrap');
        expect(run.report.uid).toBe(as === 'root' ? 0 : NOBODY);
        expect(run.report.held).toBe(WORKER_BALLAST_MIB * MiB);
        // The OOM killer's choice was among the command's processes: one at least ended by SIGKILL (128 + 9).
        expect(run.report.result.content).toMatch(/^exit code 0\n/);
        expect(run.report.result.content).toContain('score 1000');
        // The launcher (every conversation's commands hang on it) comes after the commands, before the worker.
        expect(run.report.launcherScore).toBe(900);
        expect(run.report.result.content).toContain('status 137');
      }
    }
    tally.finish('sandbox: memory exhaustion (the OOM killer ends the command)');
  });
});

/**
 * The shell launcher (activities/tools/shell-launcher.ts): shell_execute's commands start in a small process
 * of their own, not in the worker. What that must not cost: the worker's secrets must not reach it, a launcher
 * that dies must take its commands with it and be replaced, and a worker killed mid-command must leave nothing
 * running. Each attempt is a row in the security scoreboard; "lost" means something survived or leaked.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { shellExecuteTool } from '../../common/tools/definitions';
import { executors } from '../../activities/tools/registry';
import type { ShellSandbox } from '../../activities/tools/sandbox';
import { probeSandbox } from '../../activities/tools/sandbox-probe';
import { shellLauncher } from '../../activities/tools/shell-launcher';
import type { ToolRunResult } from '../../activities/types';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { pidsWith, processesWith } from '../helpers/processes';
import { until } from '../helpers/until';

const SECRET = `launcher-secret-${randomBytes(8).toString('hex')}`;
const dataDir = tempDir();
let sandbox: ShellSandbox;

/** shell_execute as the worker runs it (through the launcher). */
function shell(command: string, signal = new AbortController().signal): Promise<ToolRunResult> {
  return executors[shellExecuteTool.name]!(
    { command, timeout_seconds: 30 },
    { dataDir, sessionId: 'session:web:launcher', signal, shell: sandbox },
  );
}

/** A unique `sleep` whose process can be found on the host: `sleep 4321.123456`. */
function sleeper(): { command: string; marker: string } {
  const seconds = `${1000 + Math.floor(Math.random() * 8000)}.${Math.floor(Math.random() * 1e6)}`;
  return { command: `sleep ${seconds}`, marker: `sleep\0${seconds}\0` };
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(statusOf(pid));
function statusOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
}
const parentOf = (pid: number) => Number(/^PPid:\s+(\d+)/m.exec(statusOf(pid))?.[1] ?? 0);

/**
 * Node arguments for a worker-like process: it probes the sandbox (which starts its launcher), prints who its
 * launcher is, and runs `command` through shell_execute as `sessionId`.
 */
function workerLikeArgs(command: string, sessionId: string, mode: 'bwrap' | 'off' = 'bwrap'): string[] {
  const module = (file: string) => JSON.stringify(path.resolve(__dirname, '../..', file));
  return [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    `
    const { executors } = await import(${module('activities/tools/registry.ts')});
    const { probeSandbox } = await import(${module('activities/tools/sandbox-probe.ts')});
    const { shellLauncher } = await import(${module('activities/tools/shell-launcher.ts')});
    const shell = { status: await probeSandbox(${JSON.stringify(mode)}), network: 'none' };
    process.stdout.write('launcher ' + shellLauncher().process.pid + '\\n');
    await executors.shell_execute(
      { command: ${JSON.stringify(command)} },
      { dataDir: ${JSON.stringify(dataDir)}, sessionId: ${JSON.stringify(sessionId)}, signal: new AbortController().signal, shell },
    );`,
  ];
}

beforeAll(async () => {
  // The test process plays the worker: its environment holds a secret, as a worker's holds its tokens.
  process.env.SLACK_BOT_TOKEN = SECRET;
  sandbox = { status: await probeSandbox('bwrap'), network: 'none' };
  expect(sandbox.status.kind).toBe('bwrap');
});

describe('the shell launcher', () => {
  it("starts each command in the launcher, whose environment holds none of the worker's secrets", async () => {
    const tally = new Tally();
    for (let round = 0; round < 3; round++) {
      const launcher = shellLauncher().process.pid!;
      const environ = readFileSync(`/proc/${launcher}/environ`, 'utf8');
      if (environ.includes(SECRET)) tally.lost++;
      tally.check(!environ.includes(SECRET), () => 'the launcher started with the worker secret');
      tally.check(
        environ
          .split('\0')
          .filter(Boolean)
          // PATH, and Node's own description of the IPC channel.
          .every((entry) => /^(PATH|NODE_CHANNEL_FD|NODE_CHANNEL_SERIALIZATION_MODE)=/.test(entry)),
        () => `the launcher's environment: ${environ.replace(/\0/g, ' ')}`,
      );
      // The sandbox's bwrap is the launcher's child: the worker itself starts no process.
      const { command, marker } = sleeper();
      const controller = new AbortController();
      const run = shell(`${command}; echo done`, controller.signal);
      await until('the command running', () => pidsWith(marker).length > 0);
      const seconds = command.split(' ')[1]!;
      const bwraps = pidsWith(seconds).filter(
        (pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bwrap',
      );
      tally.check(
        bwraps.some((pid) => parentOf(pid) === launcher),
        () => `bwrap ${bwraps} with parents ${bwraps.map(parentOf)}, the launcher is ${launcher}`,
      );
      controller.abort();
      const result = await run;
      tally.check(!result.content.includes('done'), () => `the aborted command finished: ${result.content}`);
      tally.check(processesWith(marker) === 0, () => `${processesWith(marker)} processes survived the abort`);
    }
    tally.finish('sandbox: launcher isolation');
  });

  it('reports a command whose launcher died, kills it with the launcher, and starts a new launcher', async () => {
    const tally = new Tally();
    for (let round = 0; round < 3; round++) {
      const launcher = shellLauncher().process.pid!;
      const { command, marker } = sleeper();
      const run = shell(`echo started; ${command}`);
      await until('the command running', () => processesWith(marker) > 0);
      process.kill(launcher, 'SIGKILL');
      const result = await run;
      tally.check(
        result.status === 'error' && result.content.includes('the shell launcher ended (SIGKILL)'),
        () => `the run said: ${result.content}`,
      );
      // bwrap dies with its parent (--die-with-parent), and its PID 1 with it.
      const gone = await until('the command gone', () => processesWith(marker) === 0, {
        timeoutMs: 5_000,
      }).then(
        () => true,
        () => false,
      );
      if (!gone) tally.lost++;
      tally.check(gone, () => `${processesWith(marker)} processes outlived their launcher`);
      const next = await shell('echo again');
      tally.check(next.content === 'exit code 0\nagain\n', () => `the next command said: ${next.content}`);
      tally.check(shellLauncher().process.pid !== launcher, () => 'the dead launcher was reused');
    }
    tally.finish('sandbox: launcher killed mid-command');
  });

  it('leaves neither the launcher nor the command running when the worker is SIGKILLed mid-command', async () => {
    const tally = new Tally();
    for (let round = 0; round < 2; round++) {
      const { command, marker } = sleeper();
      const worker = spawn(process.execPath, workerLikeArgs(command, 'session:web:killed'), {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await until('the command running', () => processesWith(marker) > 0, { timeoutMs: 30_000 });
      const launcher = Number(/launcher (\d+)/.exec(output)?.[1]);
      worker.kill('SIGKILL');
      const clean = await until(
        'the command and the launcher gone',
        () => processesWith(marker) === 0 && !alive(launcher),
        { timeoutMs: 5_000 },
      ).then(
        () => true,
        () => false,
      );
      if (!clean) tally.lost++;
      tally.check(
        clean,
        () =>
          `after the worker died: ${processesWith(marker)} command processes, launcher alive: ${alive(launcher)}`,
      );
    }
    tally.finish('sandbox: worker killed mid-command');
  });

  it('starts commands with no descriptor beyond stdin, stdout and stderr, whatever the worker inherited', async () => {
    const tally = new Tally();
    for (const mode of ['bwrap', 'off', 'bwrap', 'off'] as const) {
      const { command, marker } = sleeper();
      // A worker-like process whose starter left it a descriptor that is not close-on-exec (a supervisor's log
      // file here, opened by bash at 200; Node marks only low-numbered inherited ones close-on-exec).
      const worker = spawn(
        'bash',
        [
          '-c',
          'exec "$@" 200>>"$LOG"',
          'bash',
          process.execPath,
          ...workerLikeArgs(command, 'session:web:descriptors', mode),
        ],
        {
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, LOG: path.join(dataDir, 'supervisor.log') },
        },
      );
      try {
        const commandPids = () =>
          pidsWith(marker).filter((pid) => {
            try {
              return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'bwrap';
            } catch {
              return false;
            }
          });
        await until('the command running', () => commandPids().length > 0, { timeoutMs: 30_000 });
        // What the rows test: the worker (bash exec'd into node, the same pid) holds fd 200, not close-on-exec.
        const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/${worker.pid}/fdinfo/200`, 'utf8'))?.[1];
        expect(parseInt(flags ?? '', 8) & 0o2000000).toBe(0);
        for (const pid of commandPids()) {
          const held = readdirSync(`/proc/${pid}/fd`).map(Number);
          const extra = held.filter((fd) => fd > 2);
          if (extra.length) tally.lost++;
          tally.check(
            extra.length === 0,
            () =>
              `${mode}: the command holds ${extra.map((fd) => `${fd} -> ${readlinkOr(`/proc/${pid}/fd/${fd}`)}`).join(', ')}`,
          );
        }
      } finally {
        worker.kill('SIGKILL');
        await until('the command gone', () => processesWith(marker) === 0, { timeoutMs: 5_000 });
      }
    }
    tally.finish('sandbox: descriptors a command inherits');
  });
});

function readlinkOr(link: string): string {
  try {
    return readlinkSync(link);
  } catch {
    return '?';
  }
}

/**
 * The shell sandbox as the Docker image runs it: the worker is an unprivileged user (`USER node`), so bwrap builds
 * the sandbox in a user namespace and the command runs as the worker's own uid, where a root worker would hand it
 * a uid of its own (sandbox.test.ts covers that path). The same attacks, from a worker-like process started as
 * `nobody` with secrets in its environment and in its files, and a descriptor its starter left open. Each attempt
 * is a row in the security scoreboard; "lost" means it got through.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ToolRunResult } from '../../activities/types';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { AS_NOBODY, readableCheckout, requireRootFor } from '../helpers/readable-checkout';

const NOBODY = 65534;
/** The code the unprivileged worker runs, readable by it wherever this checkout lives (a clone under /root too). */
const ROOT = readableCheckout();
const mark = (what: string) => `${what}-${randomBytes(6).toString('hex')}`;
const secrets = {
  SLACK_BOT_TOKEN: mark('xoxb-env'),
  OPENAI_API_KEY: mark('sk-env'),
  vaultKeyFile: mark('vault-key-file'),
  victim: mark('other-conversation'),
};

/** The worker's data directory, owned by the worker's user, as the image's volume is. */
const dataDir = tempDir('sandbox-nobody-');
const log = path.join(dataDir, 'supervisor.log');
const writtenName = mark('written');
/** Where the victim conversation's working directory is (sessionWorkdir's naming; the worker makes it). */
const victimDir = () => path.join(dataDir, 'workdirs', 'session_web_victim');

interface Run {
  row: string;
  sessionId: string;
  command: string;
}

const perl = (call: string) => `perl -e '$r = ${call}; print $r < 0 ? "refused: $!\\n" : "allowed: $r\\n"'`;
const keyringCalls = (() => {
  const numbers = { x64: [248, 249, 250], arm64: [217, 218, 219] }[process.arch as 'x64' | 'arm64'] ?? [];
  const [addKey, requestKey, keyctl] = numbers;
  return [
    `syscall(${keyctl}, 0, -3, 1)`,
    `syscall(${addKey}, $t = "user", $d = "note", $p = "${secrets.victim}", ${secrets.victim.length}, -3)`,
    `syscall(${requestKey}, $t = "user", $d = "note", 0, 0)`,
    `syscall(${keyctl}, 11, -3, 0, 0)`,
  ];
})();

const writes: Array<[command: string, hostPath: () => string]> = [
  [`echo x > ${path.join(dataDir, writtenName)}`, () => path.join(dataDir, writtenName)],
  [`echo x > ../${writtenName}`, () => path.join(dataDir, 'workdirs', writtenName)],
  [`echo x > ${path.join(victimDir(), writtenName)}`, () => path.join(victimDir(), writtenName)],
  [`echo x > /tmp/${writtenName}`, () => `/tmp/${writtenName}`],
];

const runs: Run[] = [
  { row: 'setup', sessionId: 'session:web:victim', command: `echo ${secrets.victim} > diary.txt` },
  ...[
    'env',
    "tr '\\0' '\\n' </proc/$PPID/environ",
    "tr '\\0' '\\n' </proc/1/environ",
    "for p in /proc/[0-9]*; do tr '\\0' '\\n' <$p/environ; done",
  ].map((command) => ({ row: 'env', sessionId: 'session:web:env', command })),
  ...[
    `cat ${path.join(dataDir, 'vault.key')}`,
    `cat ${path.join(victimDir(), 'diary.txt')}`,
    'cat ../*/diary.txt ../../vault.key',
    'ls -la / /work/.. /tmp; cat /work/../*/*',
    `cat ${path.join(ROOT, 'package.json')}`,
  ].map((command) => ({ row: 'reads', sessionId: 'session:web:thief', command })),
  ...writes.map(([command]) => ({ row: 'writes', sessionId: 'session:web:thief', command })),
  ...keyringCalls.map((call) => ({ row: 'keyrings', sessionId: 'session:web:keys', command: perl(call) })),
  { row: 'descriptors', sessionId: 'session:web:fds', command: 'ls -l /proc/self/fd' },
  // Here the command is root in its user namespace and owns the sandbox's /dev: files there would be memory
  // beyond every limit (bwrap's /dev is a tmpfs the size of half the host's memory).
  ...['/dev/hoard', '/dev/shm/hoard'].map((file) => ({
    row: 'hoard',
    sessionId: 'session:web:hoard',
    command: `head -c ${128 * 1024 * 1024} /dev/zero > ${file}; echo "held $(wc -c < ${file} 2>/dev/null || echo 0)"`,
  })),
];

/** What the worker-like process reports: its own uid and fd 200's flags as it started, and each run's result. */
interface Report {
  uid: number;
  fd200Flags: string;
  sandbox: string;
  results: ToolRunResult[];
}
let report: Report;

/** Runs every command through shell_execute in one worker-like process started as `nobody`. */
async function runAsNobody(): Promise<Report> {
  const module = (file: string) => JSON.stringify(path.join(ROOT, file));
  const worker = `
    const { readFileSync } = await import('node:fs');
    const fd200Flags = /^flags:\\s+([0-7]+)/m.exec(readFileSync('/proc/self/fdinfo/200', 'utf8'))[1];
    if (!readFileSync('/proc/self/environ', 'utf8').includes(process.env.SLACK_BOT_TOKEN))
      throw new Error('the worker process started without the secrets');
    const { executors } = await import(${module('activities/tools/registry.ts')});
    const { probeSandbox } = await import(${module('activities/tools/sandbox-probe.ts')});
    const { dataDir, runs } = JSON.parse(process.argv.at(-1));
    const status = await probeSandbox('bwrap');
    const shell = { status, network: 'none' };
    const results = [];
    for (const run of runs)
      results.push(await executors.shell_execute(
        { command: run.command, timeout_seconds: 20 },
        { dataDir, sessionId: run.sessionId, signal: new AbortController().signal, shell },
      ));
    process.stdout.write(JSON.stringify({ uid: process.getuid(), fd200Flags, sandbox: status.kind, results }));
    process.exit(0);`;
  const child = spawn(
    'bash',
    [
      '-c',
      // The starter opens a log at 200 (not close-on-exec), then drops to nobody: the worker inherits both.
      'exec "$@" 200>>"$LOG"',
      'bash',
      ...AS_NOBODY,
      process.execPath,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      worker,
      JSON.stringify({ dataDir, runs }),
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH!,
        HOME: dataDir,
        LOG: log,
        SLACK_BOT_TOKEN: secrets.SLACK_BOT_TOKEN,
        OPENAI_API_KEY: secrets.OPENAI_API_KEY,
      },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the worker as nobody exited with ${code}:\n${stderr}`);
  return JSON.parse(stdout) as Report;
}

const resultsOf = (row: string) =>
  runs.flatMap((run, i) => (run.row === row ? [{ run, result: report.results[i]! }] : []));
const leaked = (result: ToolRunResult) =>
  Object.values(secrets).find((secret) => result.content.includes(secret));

beforeAll(async () => {
  requireRootFor('The unprivileged sandbox rows');
  chownSync(dataDir, NOBODY, NOBODY);
  chmodSync(dataDir, 0o700);
  writeFileSync(path.join(dataDir, 'vault.key'), secrets.vaultKeyFile, { mode: 0o600 });
  chownSync(path.join(dataDir, 'vault.key'), NOBODY, NOBODY);
  writeFileSync(log, '');
  chownSync(log, NOBODY, NOBODY);
  report = await runAsNobody();
  // What every row below depends on: the worker really ran as nobody, bwrap in a user namespace, holding fd 200.
  expect(report.uid).toBe(NOBODY);
  expect(report.sandbox).toBe('bwrap');
  expect(parseInt(report.fd200Flags, 8) & 0o2000000).toBe(0);
  expect(report.results[0]).toMatchObject({ status: 'ok' });
  expect(readFileSync(path.join(victimDir(), 'diary.txt'), 'utf8')).toBe(`${secrets.victim}\n`);
}, 120_000);

describe('the shell sandbox under an unprivileged worker (user namespace)', () => {
  it("never shows the worker's environment", () => {
    const tally = new Tally();
    for (const { run, result } of resultsOf('env')) {
      const secret = leaked(result);
      if (secret) tally.lost++;
      tally.check(!secret, () => `${run.command} printed ${secret}`);
    }
    tally.finish('sandbox, unprivileged worker: secrets in env');
  });

  it("sees nothing outside its working directory, though the worker's files are its own uid's", () => {
    const tally = new Tally();
    for (const { run, result } of resultsOf('reads')) {
      const secret =
        leaked(result) ?? (result.content.includes('"devDependencies"') ? 'the checkout' : undefined);
      if (secret) tally.lost++;
      tally.check(!secret, () => `${run.command} printed ${secret}`);
    }
    for (const [command, hostPath] of writes) {
      const written = existsSync(hostPath());
      if (written) tally.lost++;
      tally.check(!written, () => `${command} wrote ${hostPath()} on the host`);
    }
    tally.check(
      readFileSync(path.join(victimDir(), 'diary.txt'), 'utf8') === `${secrets.victim}\n`,
      () => "the other conversation's file changed",
    );
    tally.finish('sandbox, unprivileged worker: files outside the workdir');
  });

  it("cannot use the kernel keyrings, which are the worker's own here", () => {
    expect(keyringCalls[0], `keyring call numbers for ${process.arch}`).not.toContain('undefined');
    const tally = new Tally();
    for (const { run, result } of resultsOf('keyrings')) {
      const allowed = !/refused: Operation not permitted/.test(result.content);
      if (allowed) tally.lost++;
      tally.check(!allowed, () => `${run.command}: ${result.content}`);
    }
    tally.finish('sandbox, unprivileged worker: kernel keyrings');
  });

  it("cannot hold memory in files under /dev beyond /dev/shm's 64 MiB", () => {
    const tally = new Tally();
    for (const { run, result } of resultsOf('hoard')) {
      const held = Number(/held (\d+)/.exec(result.content)?.[1]);
      const bounded = Number.isFinite(held) && held <= 64 * 1024 * 1024;
      if (!bounded) tally.lost++;
      tally.check(bounded, () => `${run.command}: ${result.content}`);
    }
    tally.finish('sandbox, unprivileged worker: memory held in files');
  });

  it('holds no descriptor the worker was started with', () => {
    const tally = new Tally();
    for (const { result } of resultsOf('descriptors')) {
      // `ls -l /proc/self/fd`: ls's own 0, 1, 2 and the directory it reads; fd 200 would show with its file.
      expect(result.content).toMatch(/ 0 -> /);
      const held = / 200 -> |supervisor\.log/.test(result.content);
      if (held) tally.lost++;
      tally.check(!held, () => `the command holds: ${result.content}`);
    }
    tally.finish('sandbox, unprivileged worker: descriptors a command inherits');
  });
});

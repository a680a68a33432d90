/**
 * Security: shell_execute's sandbox against the escapes an approved command could try — the worker's
 * secrets, files outside its working directory, processes left behind, a fork bomb, the network — each
 * attempt a row check on the scoreboard, "lost" counting anything that got through. Real bwrap, real
 * processes, a real local TCP listener.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { DatabaseSync } from 'node:sqlite';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type AppConfig } from '../../infra/config';
import { shellExecuteTool } from '../../common/tools/definitions';
import { executors } from '../../activities/tools/registry';
import { SANDBOX_LIMITS, type ShellSandbox } from '../../activities/tools/sandbox';
import { probeSandbox } from '../../activities/tools/sandbox-probe';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { ToolRunResult } from '../../activities/types';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { processesWith } from '../helpers/processes';

const execFileAsync = promisify(execFile);
const mark = (what: string) => `${what}-${randomBytes(6).toString('hex')}`;
/** The worker's secrets, in its environment and in its files: none may ever show in a command's output. */
const secrets = {
  SLACK_BOT_TOKEN: mark('xoxb-env'),
  DISCORD_BOT_TOKEN: mark('discord-env'),
  PAYLOAD_KEY: mark('payload-env'),
  VAULT_KEY: mark('vaultkey-env'),
  OPENAI_API_KEY: mark('sk-env'),
  vaultKeyFile: mark('vault-key-file'),
  vaultRow: mark('vault-row'),
  temporalRow: mark('temporal-row'),
  policy: mark('policy-file'),
  victim: mark('other-conversation'),
};
const ENV_NAMES = [
  'SLACK_BOT_TOKEN',
  'DISCORD_BOT_TOKEN',
  'PAYLOAD_KEY',
  'VAULT_KEY',
  'OPENAI_API_KEY',
] as const;
const savedEnv = new Map(ENV_NAMES.map((name) => [name, process.env[name]]));

let config: AppConfig;
let fullNetConfig: AppConfig;
let policyFile: string;

function sqliteWith(file: string, secret: string): void {
  const db = new DatabaseSync(file);
  db.exec('CREATE TABLE t (v TEXT)');
  db.prepare('INSERT INTO t VALUES (?)').run(secret);
  db.close();
}

beforeAll(() => {
  // The test process plays the worker: its environment holds the secrets a real worker has.
  for (const name of ENV_NAMES) process.env[name] = secrets[name];
  const dataDir = tempDir();
  const policyDir = tempDir();
  policyFile = path.join(policyDir, 'agent.config.json');
  writeFileSync(policyFile, JSON.stringify({ systemPrompt: secrets.policy }));
  const fullNetPolicy = path.join(policyDir, 'full-net.json');
  writeFileSync(fullNetPolicy, JSON.stringify({ tools: { shell_execute: { network: 'full' } } }));
  config = loadConfig({ DATA_DIR: dataDir, AGENT_CONFIG: policyFile });
  fullNetConfig = loadConfig({ DATA_DIR: tempDir(), AGENT_CONFIG: fullNetPolicy });
  writeFileSync(path.join(dataDir, 'vault.key'), secrets.vaultKeyFile);
  sqliteWith(config.credentials.vaultPath, secrets.vaultRow);
  sqliteWith(path.join(dataDir, 'temporal.sqlite'), secrets.temporalRow);
});

afterAll(() => {
  for (const [name, value] of savedEnv)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});

/** shell_execute as the worker runs it: the sandbox and network from the policy file, probed once. */
async function shell(
  sessionId: string,
  command: string,
  options: { timeoutSeconds?: number; signal?: AbortSignal; from?: AppConfig } = {},
): Promise<ToolRunResult> {
  const from = options.from ?? config;
  const sandbox: ShellSandbox = {
    status: await probeSandbox(from.policy.sandbox),
    network: from.policy.tools[shellExecuteTool.name]?.network ?? 'none',
    egress: { allowHosts: from.policy.allowHosts, denyHosts: from.policy.denyHosts },
  };
  return await executors[shellExecuteTool.name]!(
    { command, timeout_seconds: options.timeoutSeconds ?? 20 },
    {
      dataDir: from.dataDir,
      sessionId,
      signal: options.signal ?? new AbortController().signal,
      shell: sandbox,
    },
  );
}

/**
 * shell_execute run by a separate worker-like process started with the secrets in its environment (what
 * /proc/<pid>/environ shows is the environment a process started with, not what it set later).
 */
async function shellInWorkerProcess(sessionId: string, command: string): Promise<ToolRunResult> {
  const module = (file: string) => JSON.stringify(path.resolve(__dirname, '../..', file));
  const worker = `
    const { loadConfig } = await import(${module('infra/config.ts')});
    const { executors } = await import(${module('activities/tools/registry.ts')});
    const { probeSandbox } = await import(${module('activities/tools/sandbox-probe.ts')});
    const { readFileSync } = await import('node:fs');
    const config = loadConfig();
    const input = JSON.parse(process.argv.at(-1));
    if (!readFileSync('/proc/self/environ', 'utf8').includes(process.env.SLACK_BOT_TOKEN))
      throw new Error('the worker process started without the secrets');
    const shell = { status: await probeSandbox(config.policy.sandbox), network: 'none' };
    const result = await executors.shell_execute(
      { command: input.command },
      { dataDir: config.dataDir, sessionId: input.sessionId, signal: new AbortController().signal, shell },
    );
    process.stdout.write(JSON.stringify(result));`;
  const { stdout } = await execFileAsync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', worker, JSON.stringify({ sessionId, command })],
    { env: { ...process.env, DATA_DIR: config.dataDir, AGENT_CONFIG: policyFile } },
  );
  return JSON.parse(stdout) as ToolRunResult;
}

function leaked(result: ToolRunResult): string | undefined {
  return Object.values(secrets).find((secret) => result.content.includes(secret));
}

/** Host processes whose command line holds `marker` (a sandboxed process shows its own command line). */
describe('the shell sandbox', () => {
  it('runs a normal command and keeps its files between calls of the same conversation', async () => {
    const first = await shell(
      'session:web:positive',
      'echo hello; echo 41 > count.txt; pwd; echo $HOME; echo scratch > /tmp/s && cat /tmp/s',
    );
    expect(first).toEqual({ status: 'ok', content: 'exit code 0\nhello\n/work\n/work\nscratch\n' });
    const second = await shell(
      'session:web:positive',
      'n=$(cat count.txt); echo $((n + 1)) > count.txt; cat count.txt',
    );
    expect(second).toEqual({ status: 'ok', content: 'exit code 0\n42\n' });
    const onHost = path.join(sessionWorkdir(config.dataDir, 'session:web:positive'), 'count.txt');
    expect(readFileSync(onHost, 'utf8')).toBe('42\n');
  });

  it("never shows the worker's environment", async () => {
    const tally = new Tally();
    const attacks = [
      'env',
      'set',
      "tr '\\0' '\\n' </proc/$PPID/environ",
      "tr '\\0' '\\n' </proc/1/environ",
      "tr '\\0' '\\n' </proc/self/environ",
      `tr '\\0' '\\n' </proc/${process.pid}/environ`,
      `tr '\\0' '\\n' </proc/${process.ppid}/environ`,
      "for p in /proc/[0-9]*; do tr '\\0' '\\n' <$p/environ; done",
      'cat /proc/*/cmdline',
    ];
    for (const command of attacks) {
      for (const [where, result] of [
        ['in this process', await shell('session:web:env', command)],
        ['in a worker process', await shellInWorkerProcess('session:web:env', command)],
      ] as const) {
        const secret = leaked(result);
        if (secret) tally.lost++;
        tally.check(!secret, () => `${command} (${where}) printed ${secret}`);
      }
    }
    tally.finish('sandbox: secrets in env');
  });

  it('sees nothing outside its working directory and writes nowhere else', async () => {
    await shell('session:web:victim', `echo ${secrets.victim} > diary.txt`);
    const victimDir = sessionWorkdir(config.dataDir, 'session:web:victim');
    const checkout = process.cwd();
    const tally = new Tally();
    const reads = [
      `cat ${path.join(config.dataDir, 'vault.key')}`,
      `cat ${config.credentials.vaultPath}`,
      `cat ${path.join(config.dataDir, 'temporal.sqlite')}`,
      `cat ${policyFile}`,
      `cat ${path.join(victimDir, 'diary.txt')}`,
      'cat ../*/diary.txt ../../vault.key ../../temporal.sqlite',
      'ls -la / /work/.. /root /tmp; cat /work/../*/*',
      'find / \\( -path /proc -o -path /usr \\) -prune -o \\( -name "*.sqlite" -o -name vault.key -o -name diary.txt -o -name "*.json" \\) -print 2>/dev/null | xargs cat',
      `cat ${path.join(checkout, 'package.json')}`,
      'grep -rs vault / --exclude-dir=proc --exclude-dir=dev --exclude-dir=usr 2>/dev/null',
    ];
    for (const command of reads) {
      const result = await shell('session:web:thief', command);
      const secret =
        leaked(result) ?? (result.content.includes('"devDependencies"') ? 'the checkout' : undefined);
      if (secret) tally.lost++;
      tally.check(!secret, () => `${command} printed ${secret}`);
    }
    const name = mark('written');
    const writes: Array<[command: string, hostPath: string]> = [
      [`echo x > /${name}`, `/${name}`],
      [`echo x > /tmp/${name}`, `/tmp/${name}`],
      [`echo x > ${path.join(checkout, name)}`, path.join(checkout, name)],
      [`echo x > ${path.join(config.dataDir, name)}`, path.join(config.dataDir, name)],
      [`echo x > ../${name}`, path.join(config.dataDir, 'workdirs', name)],
      [`echo x > ${path.join(victimDir, name)}`, path.join(victimDir, name)],
      [`mkdir -p /usr/${name} /etc/${name}`, `/usr/${name}`],
    ];
    for (const [command, hostPath] of writes) {
      await shell('session:web:thief', command);
      const written = existsSync(hostPath);
      if (written) tally.lost++;
      tally.check(!written, () => `${command} wrote ${hostPath} on the host`);
    }
    tally.check(
      readFileSync(path.join(victimDir, 'diary.txt'), 'utf8') === `${secrets.victim}\n`,
      () => "the other conversation's file changed",
    );
    tally.finish('sandbox: files outside the workdir');
  });

  it('leaves no process behind, however it was started or however the run ended', async () => {
    const tally = new Tally();
    const attacks = [
      (s: string) => `sleep ${s} & echo started`,
      (s: string) => `setsid sleep ${s} & echo started`,
      (s: string) => `nohup sleep ${s} >/dev/null 2>&1 & echo started`,
      (s: string) => `(setsid sh -c 'sleep ${s} &' &) ; echo started`,
      (s: string) => `setsid -f sleep ${s}; echo started`,
    ];
    for (const attack of attacks) {
      for (const ending of ['exit', 'timeout', 'abort'] as const) {
        const seconds = `${1000 + Math.floor(Math.random() * 8000)}.${Math.floor(Math.random() * 1e6)}`;
        const command =
          attack(seconds) + (ending === 'exit' ? '' : `; sleep ${Number.parseFloat(seconds) + 1}`);
        const sleeper = `sleep\0${seconds}\0`;
        const controller = new AbortController();
        let settled = false;
        const run = shell('session:web:survivor', command, {
          timeoutSeconds: ending === 'timeout' ? 1 : 20,
          signal: controller.signal,
        }).finally(() => (settled = true));
        if (ending === 'abort') {
          // Abort once the background process runs, as a worker shutting down would.
          while (!settled && processesWith(sleeper) === 0) await new Promise((r) => setTimeout(r, 20));
          controller.abort();
        }
        const result = await run;
        const survivors = processesWith(sleeper);
        if (survivors) tally.lost++;
        const ran =
          ending === 'abort' ? !result.content.startsWith('exit code 0') : result.content.includes('started');
        tally.check(
          ran && survivors === 0,
          () => `${command} (${ending}): ${survivors} survivors; ${result.content.slice(0, 200)}`,
        );
      }
    }
    tally.finish('sandbox: survivors');
  });

  it('bounds a fork bomb to the sandbox and ends it, and the host still starts processes', async () => {
    const tally = new Tally();
    // Two shapes of one attack. With the sleeper started first the command can only end by its
    // timeout. With the bomb first, the shell may itself fail to fork its sleeper once the bomb
    // fills the process limit and exit on its own ("Cannot fork", exit code 2) before the timeout:
    // either way the command must end and take every bomb process with it.
    const shapes = [
      { script: (bomb: string) => `sleep 600 & ${bomb}; wait`, ends: ['timed out after 3s'] },
      { script: (bomb: string) => `${bomb}; sleep 600`, ends: ['timed out after 3s', 'exit code 2'] },
    ];
    for (const shape of shapes) {
      const name = `bomb_${randomBytes(4).toString('hex')}`;
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, processesWith(name))), 50);
      const result = await shell(
        'session:web:bomb',
        shape.script(`${name}() { ${name} | ${name} & }; ${name}`),
        {
          timeoutSeconds: 3,
        },
      );
      clearInterval(sampler);
      const survivors = processesWith(name);
      if (survivors) tally.lost++;
      tally.check(
        shape.ends.some((end) => result.content.startsWith(end)),
        () =>
          `the bomb did not end as expected (${shape.ends.join(' or ')}): ${result.content.slice(0, 200)}`,
      );
      // The two bwrap processes (outside and PID 1) carry the command line too.
      tally.check(peak <= SANDBOX_LIMITS.processes + 2, () => `${peak} bomb processes at once`);
      tally.check(survivors === 0, () => `${survivors} bomb processes survived`);
      tally.check(
        spawnSync('sh', ['-c', 'echo alive']).stdout?.toString() === 'alive\n',
        () => 'the host could not start a process after the bomb',
      );
    }
    const after = await shell('session:web:bomb', 'echo fine');
    tally.check(after.content === 'exit code 0\nfine\n', () => `the next run failed: ${after.content}`);
    tally.finish('sandbox: fork bomb');
  });

  it('cannot hold memory in files beyond its limits: /dev is read-only, /dev/shm and /tmp are bounded', async () => {
    const tally = new Tally();
    const limits = { '/dev/shm': SANDBOX_LIMITS.shmBytes, '/tmp': SANDBOX_LIMITS.tmpBytes };
    for (const [dir, limit] of Object.entries(limits)) {
      // Twice the limit written (the tmpfs refuses past it); what landed is measured inside.
      const result = await shell(
        'session:web:hoard',
        `head -c ${2 * limit} /dev/zero > ${dir}/hoard; echo "held $(wc -c < ${dir}/hoard)"`,
      );
      const held = Number(/held (\d+)/.exec(result.content)?.[1]);
      // Writable (programs use /dev/shm for shared memory), up to its size.
      expect(held, `${dir}: ${result.content}`).toBeGreaterThan(0);
      const bounded = held <= limit;
      if (!bounded) tally.lost++;
      tally.check(bounded, () => `${dir} held ${held} bytes (limit ${limit}): ${result.content}`);
    }
    for (const target of ['/dev/hoard', '/dev/pts/hoard']) {
      const result = await shell('session:web:hoard', `echo x > ${target} && echo wrote`);
      const wrote = result.content.includes('wrote');
      if (wrote) tally.lost++;
      tally.check(!wrote, () => `${target}: ${result.content}`);
    }
    // Device nodes still work.
    const devices = await shell('session:web:hoard', 'echo x > /dev/null && head -c 3 /dev/urandom | wc -c');
    expect(devices).toEqual({ status: 'ok', content: 'exit code 0\n3\n' });
    tally.finish('sandbox: memory held in files');
  });

  it("cannot use the kernel keyrings, shared with the worker and every other conversation's commands", async () => {
    // add_key, request_key, keyctl: bwrap and setpriv give no command a keyring of its own (sandbox-seccomp.ts).
    const numbers = { x64: [248, 249, 250], arm64: [217, 218, 219] }[process.arch as 'x64' | 'arm64'];
    expect(numbers, `keyring call numbers for ${process.arch}`).toBeDefined();
    const [addKey, requestKey, keyctl] = numbers!;
    const perl = (call: string) =>
      `perl -e '$r = ${call}; print $r < 0 ? "refused: $!\\n" : "allowed: $r\\n"'`;
    const secret = mark('keyring');
    const calls = [
      `syscall(${keyctl}, 0, -3, 1)`, // KEYCTL_GET_KEYRING_ID of the session keyring
      // (Perl passes strings to a system call only from variables.)
      `syscall(${addKey}, $t = "user", $d = "note", $p = "${secret}", ${secret.length}, -3)`, // a key for others
      `syscall(${requestKey}, $t = "user", $d = "note", 0, 0)`, // a key left by someone else
      `syscall(${keyctl}, 11, -3, 0, 0)`, // KEYCTL_READ: the ids of the keys in the session keyring
    ];
    // On the host the same calls work: the rows below would count a sandbox that let them through.
    const onHost = spawnSync('sh', ['-c', perl(calls[0]!)], { encoding: 'utf8' }).stdout;
    expect(onHost).toMatch(/^allowed: \d+/);
    const tally = new Tally();
    for (const conversation of ['session:web:keys-a', 'session:web:keys-b'])
      for (const call of calls) {
        const result = await shell(conversation, perl(call));
        const allowed = !/refused: Operation not permitted/.test(result.content);
        if (allowed) tally.lost++;
        tally.check(!allowed, () => `${call} in ${conversation}: ${result.content}`);
      }
    tally.finish('sandbox: kernel keyrings');
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    let connections = 0;
    const greeting = mark('listener');

    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        socket.end(`${greeting}\n`);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => server.close());

    const attempts = () => [
      `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}; head -n1 <&3'`,
      `bash -c 'exec 3<>/dev/tcp/localhost/${port}; head -n1 <&3'`,
      `command -v curl >/dev/null && curl -s --max-time 5 telnet://127.0.0.1:${port} </dev/null`,
      `command -v python3 >/dev/null && python3 -c "import socket; print(socket.create_connection(('127.0.0.1', ${port}), 5).recv(100).decode())"`,
      `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new("127.0.0.1:${port}") or die "refused: $!\\n"; print <$s>'`,
    ];

    it('reaches nothing when the policy says "none" (the default)', async () => {
      const tally = new Tally();
      for (const command of attempts()) {
        const before = connections;
        const result = await shell('session:web:net', command);
        const reached = connections > before || result.content.includes(greeting);
        if (reached) tally.lost++;
        tally.check(!reached, () => `${command} reached the listener: ${result.content}`);
      }
      tally.finish('sandbox: network none');
    });

    it('reaches no local listener when the policy says "full" either (sandbox-egress.test.ts: public only)', async () => {
      expect(fullNetConfig.policy.tools.shell_execute?.network).toBe('full');
      const tally = new Tally();
      for (const command of attempts()) {
        const before = connections;
        const result = await shell('session:web:net-full', command, { from: fullNetConfig });
        const reached = connections > before || result.content.includes(greeting);
        if (reached) tally.lost++;
        tally.check(!reached, () => `${command} reached the listener: ${result.content}`);
        expect(leaked(result)).toBeUndefined();
      }
      tally.finish('sandbox: network full, direct connections');
    });
  });
});

/**
 * The bubblewrap sandbox of shell_execute: what the command sees (a read-only minimal root, its own /proc,
 * /dev and /tmp, the conversation's working directory at /work), its limits, and whether bwrap works here.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { AddressPolicy } from './address-policy';
import { EGRESS_SOCKET_NAME, SANDBOX_EGRESS_DIR, SANDBOX_PROXY_PORT } from './egress-proxy';

export type SandboxMode = 'bwrap' | 'off';
export type SandboxNetwork = 'none' | 'full';

/** What the worker found at start: a working bwrap, an explicit "off", or why bwrap cannot run here. */
export type SandboxStatus =
  { kind: 'bwrap'; bwrap: string } | { kind: 'off' } | { kind: 'unavailable'; reason: string };

/** What shell_execute needs from the worker and the policy file. */
export interface ShellSandbox {
  status: SandboxStatus;
  network: SandboxNetwork;
  /** Under "full": the address policy its egress proxy applies (the one http_request applies). */
  egress?: AddressPolicy;
}

/** Under "network": "full": the egress proxy's directory (its socket), bound into the sandbox. */
export interface EgressMount {
  dir: string;
}

const EGRESS_BIN = '/run/egress-bin';
const EGRESS_READY = '/tmp/.egress-ready';
/**
 * Starts the bridge to the egress proxy and waits until it listens (it says so on a FIFO), then becomes the
 * command. A bridge that cannot start leaves the command without network, never with more.
 */
const EGRESS_WRAPPER =
  `mkfifo -m 600 ${EGRESS_READY} && { ${EGRESS_BIN}/node ${EGRESS_BIN}/bridge.cjs ` +
  `${SANDBOX_EGRESS_DIR}/${EGRESS_SOCKET_NAME} ${SANDBOX_PROXY_PORT} >${EGRESS_READY} 2>/dev/null & ` +
  `read -r _ <${EGRESS_READY}; rm -f ${EGRESS_READY}; }; exec sh -c "$1"`;

/** The proxy variables curl, wget, git, pip, npm and Node (NODE_USE_ENV_PROXY) follow. */
function proxyEnv(): string[] {
  const proxy = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
  const names = ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY'];
  return [...names.flatMap((name) => ['--setenv', name, proxy]), '--setenv', 'NODE_USE_ENV_PROXY', '1'];
}

/** The binds the egress bridge needs: the proxy's socket directory, this Node and the bridge script. */
function egressArgs(egress: EgressMount): string[] {
  return [
    // A parent bwrap makes itself would be 0700, out of reach of a command under another uid.
    '--perms',
    '0755',
    '--dir',
    '/run',
    '--ro-bind',
    egress.dir,
    SANDBOX_EGRESS_DIR,
    '--perms',
    '0755',
    '--dir',
    EGRESS_BIN,
    '--ro-bind',
    process.execPath,
    `${EGRESS_BIN}/node`,
    '--ro-bind',
    path.join(__dirname, 'egress-bridge.cjs'),
    `${EGRESS_BIN}/bridge.cjs`,
  ];
}

export const SANDBOX_LIMITS = {
  /** Processes (threads included) of one sandbox: a fork bomb hits this, not the host. */
  processes: 256,
  /** Address space of each process: enough for node or python, not for eating the host's memory. */
  memoryBytes: 2 * 1024 ** 3,
  /** The largest file a command may write. */
  fileBytes: 1024 ** 3,
  /** The private /tmp lives in memory. */
  tmpBytes: 256 * 1024 ** 2,
  /** So does /dev/shm (POSIX shared memory); the rest of /dev is read-only. */
  shmBytes: 64 * 1024 ** 2,
  /**
   * The OOM killer's preference (oom_score_adj, -1000 … 1000): a command's processes are ended first when memory
   * runs out, then the shell launcher (which the worker replaces), never first the worker.
   */
  commandOomScore: 1000,
  launcherOomScore: 900,
};

/** The descriptor on which bwrap reports the host PID of the sandbox's PID 1 (JSON `child-pid`). */
export const INFO_FD = 3;
/** The descriptor from which bwrap reads the seccomp filter it installs (sandbox-seccomp.ts). */
export const SECCOMP_FD = 4;
/** Where the working directory appears inside the sandbox; also HOME. */
export const SANDBOX_WORKDIR = '/work';
const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin';
/** The /etc files a shell and its tools need (users, name resolution, certificates, the dynamic linker). */
const ETC_FILES = [
  'passwd',
  'group',
  'hosts',
  'host.conf',
  'nsswitch.conf',
  'resolv.conf',
  'gai.conf',
  'protocols',
  'services',
  'localtime',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'ssl',
  'ca-certificates',
  'mime.types',
];
const ROOT_DIRS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/** How to fix an unavailable sandbox, whatever the reason. */
export const SANDBOX_FIX =
  'install bubblewrap (Debian: apt-get install bubblewrap) and allow user namespaces (in Docker: the ' +
  'security_opt of the worker in docker-compose.yml), or set "sandbox": "off" in the policy file';

export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The system directories of the host, read-only; merged-/usr links stay links. */
function rootArgs(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of ROOT_DIRS) {
    const host = `/${dir}`;
    if (!existsSync(host)) continue;
    if (lstatSync(host).isSymbolicLink()) args.push('--symlink', readlinkSync(host), host);
    else args.push('--ro-bind', host, host);
  }
  // bwrap would make a missing parent 0700, unreadable for a command under another uid.
  args.push('--perms', '0755', '--dir', '/etc');
  for (const file of ETC_FILES) args.push('--ro-bind-try', `/etc/${file}`, `/etc/${file}`);
  return args;
}

/**
 * The bwrap command line for one run. As root, bwrap keeps its privileges to build the sandbox and the
 * command drops to the conversation's uid (`setpriv`); otherwise bwrap builds it in a user namespace.
 */
export function bwrapArgs(input: {
  command: string;
  workdir: string;
  network: SandboxNetwork;
  timeoutSeconds: number;
  uid: number | undefined;
  /** Under "full": the egress proxy to bridge to. Without it, "full" is refused (never the host's network). */
  egress?: EgressMount | undefined;
}): string[] {
  if (input.network === 'full' && !input.egress)
    throw new Error('"network": "full" needs its egress proxy; nothing ran');
  const egress = input.network === 'full' ? input.egress : undefined;
  const limits = [
    'prlimit',
    `--cpu=${Math.max(1, Math.ceil(input.timeoutSeconds))}`,
    `--as=${SANDBOX_LIMITS.memoryBytes}`,
    `--nproc=${SANDBOX_LIMITS.processes}`,
    `--fsize=${SANDBOX_LIMITS.fileBytes}`,
    '--core=0',
    '--',
  ];
  const dropToUid =
    input.uid === undefined
      ? []
      : [
          'setpriv',
          `--reuid=${input.uid}`,
          `--regid=${input.uid}`,
          '--clear-groups',
          '--inh-caps=-all',
          '--',
        ];
  const privileges =
    input.uid === undefined
      ? ['--unshare-user']
      : // Only what `setpriv` needs to switch uid (which clears them all) and to enter the uid's own 0700 /work.
        [
          '--cap-drop',
          'ALL',
          ...['CAP_SETUID', 'CAP_SETGID', 'CAP_DAC_OVERRIDE'].flatMap((c) => ['--cap-add', c]),
        ];
  return [
    ...privileges,
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // Always a network namespace of its own: "full" reaches out only through the egress proxy.
    '--unshare-net',
    // When PID 1 ends, the kernel kills everything else in the sandbox before bwrap sees it go. The command
    // itself is PID 1 where it may be (bwrap's own PID 1 lets bwrap exit first and the rest die later; see
    // `endSandbox`); a command under another uid than bwrap's would not get --die-with-parent's signal.
    ...(input.uid === undefined ? ['--as-pid-1'] : []),
    '--info-fd',
    String(INFO_FD),
    '--seccomp',
    String(SECCOMP_FD),
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
    ...rootArgs(),
    '--proc',
    '/proc',
    // Read-only: a command must not lower its own oom_score_adj (shell-launcher-main.ts), which it could when the
    // worker is not root (a score raised without privilege may be lowered again), nor write anything else there.
    // Nested user namespaces need a writable /proc/self/uid_map, so they do not work in the sandbox.
    '--remount-ro',
    '/proc',
    '--dev',
    '/dev',
    // Files written to /dev would be memory beyond every limit (bwrap's /dev is a tmpfs the size of half the
    // host's memory): read-only, but for a bounded /dev/shm. Device nodes such as /dev/null still take writes.
    '--size',
    String(SANDBOX_LIMITS.shmBytes),
    '--perms',
    '1777',
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    '--size',
    String(SANDBOX_LIMITS.tmpBytes),
    '--perms',
    '1777',
    '--tmpfs',
    '/tmp',
    '--bind',
    input.workdir,
    SANDBOX_WORKDIR,
    ...(egress ? egressArgs(egress) : []),
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_WORKDIR,
    '--clearenv',
    '--setenv',
    'PATH',
    SANDBOX_PATH,
    '--setenv',
    'HOME',
    SANDBOX_WORKDIR,
    ...(egress ? proxyEnv() : []),
    '--',
    ...dropToUid,
    ...limits,
    'sh',
    '-c',
    ...(egress ? [EGRESS_WRAPPER, 'sh', input.command] : [input.command]),
  ];
}

/** util-linux's choom, which starts a program with a given oom_score_adj (Node's spawn cannot set one). */
let choom: string | undefined | null = null;

/**
 * choom where it can do its work: on Linux, installed, and allowed to set a score here (a read-only /proc or a
 * security module refusing the write would make every program started through it fail).
 */
function workingChoom(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const found = findExecutable('choom');
  const noop = findExecutable('true');
  if (!found || !noop) return undefined;
  const score = String(SANDBOX_LIMITS.commandOomScore);
  return spawnSync(found, ['-n', score, '--', noop], { stdio: 'ignore', timeout: 5_000 }).status === 0
    ? found
    : undefined;
}

/**
 * `program` and `args`, started first in the OOM killer's line (SANDBOX_LIMITS.commandOomScore) where choom
 * works; elsewhere as they are, keeping their starter's score. A program that cannot be found is left unwrapped,
 * so its start fails as it would (ENOENT) instead of as choom's exit code 127. `searchPath`: the PATH the program
 * is looked up on.
 */
export function withOomScore(
  program: string,
  args: string[],
  searchPath = process.env.PATH ?? '',
): [string, string[]] {
  if (choom === null) choom = workingChoom();
  const found = program.includes('/')
    ? existsSync(program)
    : findExecutable(program, searchPath) !== undefined;
  return choom && found
    ? [choom, ['-n', String(SANDBOX_LIMITS.commandOomScore), '--', program, ...args]]
    : [program, args];
}

/** The bwrap executable on the worker's PATH, or none. */
export function findBwrap(searchPath = process.env.PATH ?? ''): string | undefined {
  return findExecutable('bwrap', searchPath);
}

/** An executable on `searchPath` or in /usr/bin or /bin, or none. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of [...searchPath.split(path.delimiter), '/usr/bin', '/bin']) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

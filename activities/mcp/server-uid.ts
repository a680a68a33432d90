/**
 * Each stdio tool server process under a uid of its own, when the worker runs as root: a person's own server (with
 * their token in its environment) gets the uid of that person and server, a shared one the uid of its server. A
 * process may read another's environment (`/proc/<pid>/environ`) and memory only under the same uid, so one person's
 * server cannot read another person's token, nor the worker's secrets. The uids come from the same table as the
 * conversations' sandbox uids (activities/tools/sandbox-uids.ts), so none is ever shared.
 *
 * Each uid gets a home of its own (owner-only; npx and most servers write a cache there), outside DATA_DIR, which
 * stays private to the worker. A worker that is not root (the Docker image's `node` user) runs each server in PID and
 * mount namespaces of its own instead (bubblewrap), where /proc shows no other process and DATA_DIR is empty. Neither
 * possible: the servers run as the worker's user, as before, and the worker says so once.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sandboxUid } from '../tools/sandbox-uids';
import { findExecutable, runsAsRoot } from '../tools/sandbox';

export interface ServerIsolation {
  /** The worker's DATA_DIR/workdirs: where the uid table lives (DATA_DIR is its parent). */
  workdirsDir: string;
  /** Where the servers' homes are made (default: a directory of this DATA_DIR's under the system's temp dir). */
  homesDir?: string;
}

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** The uid the server runs under, when it has one of its own. */
  uid?: number;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);

let unavailable: { reason: string | undefined } | undefined;
let namespaces: { bwrap: string | undefined; reason: string | undefined } | undefined;

/**
 * Not root: can the servers run in PID and mount namespaces of their own (bubblewrap in a user namespace)? Then a
 * server sees only its own processes in /proc, so not another's environment, and not the worker's DATA_DIR.
 */
export function namespacesUnavailable(): string | undefined {
  if (!namespaces) {
    const bwrap = findExecutable('bwrap');
    if (!bwrap) namespaces = { bwrap, reason: 'bubblewrap (bwrap) is not installed' };
    else {
      const probe = spawnSync(bwrap, [...NAMESPACE_ARGS, 'true'], { stdio: 'ignore', timeout: 10_000 });
      namespaces =
        probe.status === 0
          ? { bwrap, reason: undefined }
          : { bwrap, reason: 'bubblewrap cannot make PID namespaces here (user namespaces not allowed?)' };
    }
  }
  return namespaces.reason;
}

const NAMESPACE_ARGS = ['--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--die-with-parent'];

/**
 * A worker that is not root cannot give a server a uid of its own: the server runs in PID and mount namespaces of
 * its own instead (the same filesystem, the same network), where /proc shows only its own processes and the
 * worker's DATA_DIR is an empty folder.
 */
export function namespacedLaunch(isolation: ServerIsolation, launch: Launch): Launch {
  return {
    ...launch,
    command: namespaces!.bwrap!,
    args: [
      ...NAMESPACE_ARGS,
      '--tmpfs',
      path.dirname(isolation.workdirsDir),
      '--',
      launch.command,
      ...launch.args,
    ],
  };
}

/** Why servers cannot have uids of their own here, or undefined when they can (looked up once). */
export function isolationUnavailable(): string | undefined {
  unavailable ??= {
    reason: !runsAsRoot()
      ? 'the worker does not run as root'
      : !findExecutable('setpriv')
        ? 'setpriv (util-linux) is not installed'
        : undefined,
  };
  return unavailable.reason;
}

/**
 * The server's launch under its own uid: `setpriv` drops to that uid and group (no other groups, no new
 * privileges) before the server's own command runs, with HOME and the working directory its home.
 */
export function isolatedLaunch(
  isolation: ServerIsolation,
  /** One uid per server, or per server and person for a person's own process. */
  owner: { server: string; userId?: string | undefined },
  launch: Launch,
): Launch {
  const key =
    owner.userId === undefined ? `server\0${owner.server}` : `person\0${owner.server}\0${owner.userId}`;
  const name = `mcp-${digest(key)}`;
  const uid = sandboxUid(path.join(isolation.workdirsDir, name));
  const homes =
    isolation.homesDir ?? path.join(os.tmpdir(), `agent-mcp-homes-${digest(isolation.workdirsDir)}`);
  // The parent only lets each uid reach its own home (0711: no listing); the home is its uid's alone.
  mkdirSync(homes, { recursive: true, mode: 0o711 });
  chmodSync(homes, 0o711);
  const home = path.join(homes, name);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  chownSync(home, uid, uid);
  chmodSync(home, 0o700);
  return {
    command: findExecutable('setpriv')!,
    args: [
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      '--no-new-privs',
      '--',
      launch.command,
      ...launch.args,
    ],
    env: { ...launch.env, HOME: home, USER: name, LOGNAME: name },
    cwd: home,
    uid,
  };
}

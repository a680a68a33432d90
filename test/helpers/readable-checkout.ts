/**
 * The checkout as an unprivileged worker can read it, wherever it was cloned: the Docker image gives its `node` user
 * readable code by construction, but a clone under `/root` (mode 700) or a `mktemp -d` does not. A fresh directory,
 * readable by everyone, gets the checkout by hard links (instant; a copy when the temp folder is another file
 * system): its files are the checkout's own, its folders new and open. Always used, so every run proves it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const made = new Map<string, string>();

export function readableCheckout(source = ROOT): string {
  const known = made.get(source);
  if (known) return known;
  const parent = mkdtempSync(path.join(os.tmpdir(), 'agent-readable-'));
  chmodSync(parent, 0o755);
  const copy = path.join(parent, 'checkout');
  mkdirSync(copy, { mode: 0o755 });
  chmodSync(copy, 0o755);
  const entries = readdirSync(source)
    .filter((name) => name !== '.git' && name !== 'data')
    .map((name) => path.join(source, name));
  try {
    execFileSync('cp', ['-al', '--no-preserve=mode', ...entries, copy]);
  } catch {
    // Hard links cannot cross file systems (a tmpfs /tmp): a copy then.
    execFileSync('cp', ['-a', '--no-preserve=mode,ownership', ...entries, copy]);
  }
  made.set(source, copy);
  return copy;
}

/** What the unprivileged rows need from the machine, said plainly instead of failing on a later, unrelated error. */
export function requireRootFor(what: string): void {
  if (process.getuid?.() !== 0)
    throw new Error(
      `${what} needs root: it starts a worker as nobody (setpriv) and hands it its data directory (chown). Run the tests as root, as .ci/run does.`,
    );
}

/** `setpriv` arguments that run what follows as `nobody` (uid and gid 65534, no groups), as the tests' worker. */
export const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];

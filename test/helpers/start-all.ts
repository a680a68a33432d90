/** `npm start` as a process of its own (scripts/start.ts), as a newcomer runs it; ready once its gateway answers and it said so. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gatewayReady } from './processes';

const ROOT = path.resolve(__dirname, '../..');

/** `cwd`: the directory it starts in, where a newcomer's `.env` and default `./data` live (the checkout unless set). */
/** A variable set to `undefined` is taken out of the environment (as if the shell never set it). */
export async function startAll(env: Record<string, string | undefined>, port: number, cwd = ROOT) {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  // tsx by its path: a directory other than the checkout has no node_modules to find it in.
  const tsx = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', tsx, path.join(ROOT, 'scripts/start.ts')], {
    cwd,
    env: merged,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const ready = gatewayReady(port);
  const deadline = Date.now() + 90_000;
  // Ready once the gateway answers and the header is printed (it follows the gateway's start by a moment).
  while (!(await ready()) || !output.includes('Stop with Ctrl-C.')) {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const stop = async (): Promise<number | null> => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    return await exited;
  };
  /** As the machine's OOM killer or `kill -9` ends it: no cleanup of its own. */
  const kill = async (): Promise<number | null> => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGKILL');
    return await exited;
  };
  return { stop, kill, output: () => output };
}

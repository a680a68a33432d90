/** Whether shell_execute's sandbox can start on this machine: tried once per process, then remembered. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBwrap, type SandboxMode, type SandboxStatus } from './sandbox';
import { runShellInLauncher, shellLauncher } from './shell-launcher';

const probes = new Map<SandboxMode, Promise<SandboxStatus>>();

export function probeSandbox(mode: SandboxMode): Promise<SandboxStatus> {
  let probe = probes.get(mode);
  if (!probe) {
    probe = tryBwrap(mode);
    probes.set(mode, probe);
  }
  return probe;
}

async function tryBwrap(mode: SandboxMode): Promise<SandboxStatus> {
  if (mode === 'off') {
    // Started now, while the worker is small, as the probe below starts it for bwrap (shell-launcher.ts).
    shellLauncher();
    return { kind: 'off' };
  }
  if (process.platform !== 'linux')
    return { kind: 'unavailable', reason: `bubblewrap needs Linux, this worker runs on ${process.platform}` };
  const bwrap = findBwrap();
  if (!bwrap) return { kind: 'unavailable', reason: 'bwrap (bubblewrap) is not installed' };
  const status: SandboxStatus = { kind: 'bwrap', bwrap };
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'sandbox-probe-'));
  try {
    // The very sandbox a command gets, started the very way, so a missing user namespace or setpriv shows here.
    const result = await runShellInLauncher({
      command: 'echo ok',
      timeoutSeconds: 20,
      cwd: workdir,
      sandbox: { status, network: 'none' },
    });
    if (result.status === 'ok' && result.content.trim() === 'exit code 0\nok') return status;
    const said = result.content
      .replace(/^exit code \S+\n/, '')
      .trim()
      .slice(0, 500);
    return { kind: 'unavailable', reason: `bwrap could not start a sandbox: ${said}` };
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}

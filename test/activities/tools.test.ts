import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ShellSandbox } from '../../activities/tools/sandbox';
import { probeSandbox } from '../../activities/tools/sandbox-probe';
import { runShell } from '../../activities/tools/shell';
import { currentTime } from '../../activities/tools/time';
import { tempDir } from '../helpers/config';

describe('shell_execute', () => {
  let sandbox: ShellSandbox;
  beforeAll(async () => {
    sandbox = { status: await probeSandbox('bwrap'), network: 'none' };
  });

  it('runs in the given directory and reports exit code and output', async () => {
    const cwd = tempDir();
    const result = await runShell({
      command: 'echo hi > f.txt; cat f.txt; exit 3',
      timeoutSeconds: 10,
      cwd,
      sandbox,
    });
    expect(result).toEqual({ status: 'error', content: 'exit code 3\nhi\n' });
    expect(readFileSync(path.join(cwd, 'f.txt'), 'utf8')).toBe('hi\n');
  });

  it('kills a command that outlives its timeout', async () => {
    const result = await runShell({
      command: 'echo started; sleep 30',
      timeoutSeconds: 1,
      cwd: tempDir(),
      sandbox,
    });
    expect(result.status).toBe('error');
    expect(result.content).toMatch(/^timed out after 1s and was killed\. Output so far:\nstarted/);
  });

  it('caps huge output and says so', async () => {
    const result = await runShell({
      command: 'yes x | head -c 100000',
      timeoutSeconds: 10,
      cwd: tempDir(),
      sandbox,
    });
    expect(result.content.length).toBeLessThan(20_000);
    expect(result.content).toContain('[output truncated');
  });

  it('stops reading an endless output at the cap, so the command ends instead of running to its timeout', async () => {
    const result = await runShell({ command: 'yes x', timeoutSeconds: 60, cwd: tempDir(), sandbox });
    expect(result.content).not.toContain('timed out');
    expect(result.content).toContain('[output truncated');
  });

  it("does not hand the worker's secrets to the command", async () => {
    process.env.SECRET_FOR_TEST = 'sk-should-not-leak';
    const result = await runShell({ command: 'env', timeoutSeconds: 10, cwd: tempDir(), sandbox });
    delete process.env.SECRET_FOR_TEST;
    expect(result.content).not.toContain('sk-should-not-leak');
  });

  it('refuses, saying why and how to fix it, where the sandbox cannot start', async () => {
    const cwd = tempDir();
    const result = await runShell({
      command: 'touch ran',
      timeoutSeconds: 10,
      cwd,
      sandbox: {
        status: { kind: 'unavailable', reason: 'bwrap (bubblewrap) is not installed' },
        network: 'none',
      },
    });
    expect(result.status).toBe('error');
    expect(result.content).toContain('bwrap (bubblewrap) is not installed');
    expect(result.content).toContain('apt-get install bubblewrap');
    expect(result.content).toContain('"sandbox": "off"');
    expect(existsSync(path.join(cwd, 'ran'))).toBe(false);
  });

  it('runs unsandboxed, in the working directory, when the policy turns the sandbox off', async () => {
    const cwd = tempDir();
    const result = await runShell({
      command: 'pwd',
      timeoutSeconds: 10,
      cwd,
      sandbox: { status: await probeSandbox('off'), network: 'none' },
    });
    expect(result).toEqual({ status: 'ok', content: `exit code 0\n${cwd}\n` });
  });
});

describe('current_time', () => {
  it('gives UTC, a named zone, or a clear error for an unknown zone', () => {
    const now = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(currentTime(undefined, now)).toEqual({ status: 'ok', content: '2026-01-02T03:04:05.000Z' });
    expect(currentTime('Asia/Tokyo', now).content).toContain('12:04:05');
    expect(currentTime('Mars/Olympus', now)).toMatchObject({
      status: 'error',
      content: expect.stringContaining('unknown time zone'),
    });
  });
});

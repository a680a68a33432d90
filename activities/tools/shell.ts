/** shell_execute: `sh -c` in the session's own working directory, with a timeout and an output cap. */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ToolRunResult } from '../types';
import { OUTPUT_CAP, capOutput } from './output-cap';

export function sessionWorkdir(dataDir: string, sessionId: string): string {
  const safe = sessionId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 200);
  const dir = path.join(dataDir, 'workdirs', safe);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function runShell(input: {
  command: string;
  timeoutSeconds: number;
  cwd: string;
  signal?: AbortSignal;
}): Promise<ToolRunResult> {
  return await new Promise((resolve) => {
    const child = spawn('sh', ['-c', input.command], {
      cwd: input.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: input.cwd },
      detached: true,
    });
    let output = '';
    let timedOut = false;
    const collect = (chunk: Buffer) => {
      if (output.length <= OUTPUT_CAP) output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, input.timeoutSeconds * 1000);
    input.signal?.addEventListener('abort', killGroup);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ status: 'error', content: `could not start the command: ${error.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const body = capOutput(output) || '(no output)';
      if (timedOut)
        return resolve({
          status: 'error',
          content: `timed out after ${input.timeoutSeconds}s and was killed. Output so far:\n${body}`,
        });
      resolve({ status: code === 0 ? 'ok' : 'error', content: `exit code ${code}\n${body}` });
    });
  });
}

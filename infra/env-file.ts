/**
 * `.env` in the directory a process starts in (as `.env.example` says to make it): read into the environment
 * before the configuration, so a newcomer's `OPENAI_API_KEY` is used, not silently ignored. What the environment
 * already sets wins (the shell, compose, a test); `AGENT_DOTENV=off` skips the file. Only names are ever told.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';

export interface DotEnvRead {
  file: string;
  /** The names taken from the file (those the environment did not already set). */
  used: string[];
  /** The names the file sets but the environment overrides. */
  overridden: string[];
}

export function loadDotEnv(
  dir = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): DotEnvRead | undefined {
  if (env.AGENT_DOTENV === 'off') return undefined;
  const file = path.join(dir, '.env');
  if (!existsSync(file)) return undefined;
  const parsed = parseEnv(readFileSync(file, 'utf8'));
  const used: string[] = [];
  const overridden: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (env[name] !== undefined) overridden.push(name);
    else {
      env[name] = value;
      used.push(name);
    }
  }
  return { file, used, overridden };
}

/** One line for the log: which settings came from the file (names only: values may be keys). */
export function describeDotEnv(read: DotEnvRead): string {
  const parts = [`read ${read.file}: ${read.used.length ? read.used.join(', ') : 'nothing new'}`];
  if (read.overridden.length) parts.push(`(the environment sets ${read.overridden.join(', ')} itself)`);
  return parts.join(' ');
}

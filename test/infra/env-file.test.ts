/** `.env` is read before the configuration, as `.env.example` promises: the environment wins, only names are told. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { describeDotEnv, loadDotEnv } from '../../infra/env-file';
import { tempDir } from '../helpers/config';

describe('.env', () => {
  it('configures the model from .env, lets the environment win, and names settings without their values', () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, '.env'),
      '# copied from .env.example\nMODEL_PROVIDER=openai\nOPENAI_API_KEY="sk-from-the-file"\nMODEL=gpt-from-file\n',
    );
    const env: NodeJS.ProcessEnv = { MODEL: 'gpt-from-shell' };
    const read = loadDotEnv(dir, env)!;
    expect(read.used).toEqual(['MODEL_PROVIDER', 'OPENAI_API_KEY']);
    expect(read.overridden).toEqual(['MODEL']);
    const config = loadConfig({ ...env, DATA_DIR: tempDir() });
    expect(config.model).toMatchObject({ provider: 'openai', name: 'gpt-from-shell' });
    const line = describeDotEnv(read);
    expect(line).toContain('MODEL_PROVIDER, OPENAI_API_KEY');
    expect(line).not.toContain('sk-from-the-file');
  });

  it('takes .env.example as it is, copied to .env: npm start works with it unchanged', () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, '.env'),
      readFileSync(path.resolve(__dirname, '../../.env.example'), 'utf8'),
    );
    const env: NodeJS.ProcessEnv = {};
    expect(loadDotEnv(dir, env)!.used).toContain('MODEL_PROVIDER');
    expect(loadConfig({ ...env, DATA_DIR: tempDir() }).model.provider).toBe('scripted');
  });

  it('reads nothing without a file, or with AGENT_DOTENV=off', () => {
    const dir = tempDir();
    expect(loadDotEnv(dir, {})).toBeUndefined();
    writeFileSync(path.join(dir, '.env'), 'MODEL=x\n');
    const env: NodeJS.ProcessEnv = { AGENT_DOTENV: 'off' };
    expect(loadDotEnv(dir, env)).toBeUndefined();
    expect(env.MODEL).toBeUndefined();
  });
});

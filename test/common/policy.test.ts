import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../common/duration';
import { globMatches } from '../../common/glob';
import type { Grant } from '../../common/grants';
import { decidePolicy } from '../../common/policy';
import {
  currentTimeTool,
  httpRequestTool,
  shellExecuteTool,
  checkToolArgs,
} from '../../common/tools/definitions';

const grant = (overrides: Partial<Grant>): Grant => ({
  id: 'g1',
  userId: 'alice',
  toolName: 'shell_execute',
  scope: 'session',
  sessionId: 'session:web:a',
  createdAt: 0,
  ...overrides,
});

const base = { config: undefined, grants: [] as Grant[], userId: 'alice', sessionId: 'session:web:a' };

describe('glob patterns', () => {
  it('matches prefixes with * and single characters with ?', () => {
    expect(globMatches('git status*', 'git status')).toBe(true);
    expect(globMatches('git status*', 'git status -s')).toBe(true);
    expect(globMatches('git status*', 'git push')).toBe(false);
    expect(globMatches('ls ?', 'ls a')).toBe(true);
    expect(globMatches('ls ?', 'ls ab')).toBe(false);
  });

  it('treats regular-expression characters literally', () => {
    expect(globMatches('echo (a|b)', 'echo (a|b)')).toBe(true);
    expect(globMatches('echo (a|b)', 'echo a')).toBe(false);
    expect(globMatches('a.b', 'axb')).toBe(false);
  });
});

describe('durations', () => {
  it('parses units, plain milliseconds and never', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('24h')).toBe(86_400_000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('never')).toBe('never');
  });

  it('explains what a bad duration should look like', () => {
    expect(() => parseDuration('soon')).toThrow(/"soon" is not a duration: use forms like "90s"/);
  });
});

describe('approval policy', () => {
  it("uses each tool's default: shell asks, GET runs, POST asks, time runs", () => {
    expect(decidePolicy({ ...base, tool: shellExecuteTool, args: { command: 'ls' } }).decision).toBe('ask');
    expect(
      decidePolicy({ ...base, tool: httpRequestTool, args: { method: 'GET', url: 'https://x.test' } })
        .decision,
    ).toBe('auto');
    expect(
      decidePolicy({ ...base, tool: httpRequestTool, args: { method: 'POST', url: 'https://x.test' } })
        .decision,
    ).toBe('ask');
    expect(decidePolicy({ ...base, tool: currentTimeTool, args: {} }).decision).toBe('auto');
  });

  it('lets configuration override the default, with deny patterns winning over everything', () => {
    const config = { policy: 'auto' as const, allow: [], deny: ['rm *'] };
    expect(decidePolicy({ ...base, tool: shellExecuteTool, args: { command: 'ls' }, config }).decision).toBe(
      'auto',
    );
    const denied = decidePolicy({ ...base, tool: shellExecuteTool, args: { command: 'rm -rf /' }, config });
    expect(denied).toMatchObject({ decision: 'deny', reason: 'blocked by the deny pattern "rm *"' });
    expect(
      decidePolicy({
        ...base,
        tool: currentTimeTool,
        args: {},
        config: { policy: 'deny', allow: [], deny: [] },
      }).decision,
    ).toBe('deny');
  });

  it('runs commands matching an allow pattern without asking', () => {
    const config = { allow: ['ls *'], deny: [] };
    expect(
      decidePolicy({ ...base, tool: shellExecuteTool, args: { command: 'ls -la' }, config }).decision,
    ).toBe('auto');
    expect(
      decidePolicy({ ...base, tool: shellExecuteTool, args: { command: 'cat x' }, config }).decision,
    ).toBe('ask');
  });

  it('applies a session grant only in its own session and only for its owner', () => {
    const grants = [grant({})];
    expect(decidePolicy({ ...base, tool: shellExecuteTool, args: { command: 'x' }, grants })).toMatchObject({
      decision: 'auto',
      grantId: 'g1',
    });
    expect(
      decidePolicy({
        ...base,
        sessionId: 'session:web:b',
        tool: shellExecuteTool,
        args: { command: 'x' },
        grants,
      }).decision,
    ).toBe('ask');
    expect(
      decidePolicy({ ...base, userId: 'bob', tool: shellExecuteTool, args: { command: 'x' }, grants })
        .decision,
    ).toBe('ask');
  });

  it('applies a user grant everywhere, limited by its pattern', () => {
    const grants = [grant({ scope: 'user', sessionId: undefined, pattern: 'git status*' })];
    const elsewhere = { ...base, sessionId: 'session:slack:T:C:1', grants, tool: shellExecuteTool };
    expect(decidePolicy({ ...elsewhere, args: { command: 'git status -s' } }).decision).toBe('auto');
    expect(decidePolicy({ ...elsewhere, args: { command: 'git push' } }).decision).toBe('ask');
  });
});

describe('tool argument checks', () => {
  it('accepts valid arguments and fills defaults', () => {
    expect(checkToolArgs(httpRequestTool, { url: 'https://example.com' })).toEqual({
      ok: true,
      args: { method: 'GET', url: 'https://example.com' },
    });
  });

  it('explains invalid arguments in words the model can act on', () => {
    const result = checkToolArgs(shellExecuteTool, { cmd: 42 });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/^invalid arguments for shell_execute: .*command/);
    expect(checkToolArgs(httpRequestTool, { url: 'ftp://x' }).ok).toBe(false);
    expect(checkToolArgs(shellExecuteTool, 'not json').ok).toBe(false);
  });
});

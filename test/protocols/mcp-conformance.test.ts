/**
 * MCP's own conformance suite (`@modelcontextprotocol/conformance`, client mode: every client scenario and the auth
 * suite) against the runtime's MCP code, driven by scripts/mcp-conformance-client.ts. The suite itself judges: it exits
 * non-zero when a scenario fails that test/protocols/mcp-conformance-baseline.yml does not name with its reason, and
 * when a named one starts passing (the entry must then go).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');

describe('MCP conformance (client)', () => {
  it('passes every client scenario and the auth suite, but for the named exceptions', async () => {
    // The suite writes its results where it runs: a directory of its own, not the checkout.
    const cwd = mkdtempSync(path.join(tmpdir(), 'mcp-conformance-'));
    const command = `cd '${ROOT}' && '${process.execPath}' --import tsx scripts/mcp-conformance-client.ts`;
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        path.join(ROOT, 'node_modules/.bin/conformance'),
        [
          'client',
          '--command',
          command,
          '--suite',
          'all',
          '--expected-failures',
          path.join(ROOT, 'test/protocols/mcp-conformance-baseline.yml'),
        ],
        { cwd, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({
            code: error ? ((error as { code?: number }).code ?? 1) : 0,
            output: `${stdout}\n${stderr}`,
          }),
      );
    });
    const summary = output.slice(output.lastIndexOf('=== SUITE SUMMARY ==='));
    expect(code, summary).toBe(0);
    // The scenarios that matter most to people signing in to tool servers pass outright.
    for (const scenario of [
      'initialize',
      'tools_call',
      'sse-retry',
      'auth/metadata-default',
      'auth/scope-from-www-authenticate',
      'auth/token-endpoint-auth-basic',
      'auth/pre-registration',
      'auth/2025-03-26-oauth-endpoint-fallback',
      'auth/resource-mismatch',
    ])
      expect(summary).toMatch(new RegExp(`✓ ${scenario.replace('/', '\\/')}: \\d+ passed, 0 failed`));
  }, 360_000);
});

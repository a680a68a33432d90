/**
 * The stdio MCP fixtures as a worker running as root starts them: under uids of their own
 * (activities/mcp/server-uid.ts). So the script is taken from a checkout every uid can read (a clone under /root
 * could not be), and the folder it writes in is open to every uid (sticky, as /tmp).
 */
import { chmodSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './config';
import { readableCheckout } from './readable-checkout';

export function mcpFixture(name: 'mcp-notes-server.mjs' | 'mcp-asking-server.mjs'): string {
  return path.join(readableCheckout(), 'test/fixtures', name);
}

/** A folder a fixture server writes in, whichever uid it runs under. */
export function serverDir(prefix: string): string {
  const dir = tempDir(prefix);
  chmodSync(dir, 0o1777);
  return dir;
}

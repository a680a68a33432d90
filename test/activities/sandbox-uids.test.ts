/**
 * Each conversation runs its commands under a uid of its own. The uid was a hash of the working directory modulo
 * 20,000, so two conversations could share one and read each other's files; now each directory is given the next
 * free uid, once, and keeps it.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIRST_SANDBOX_UID, sandboxUid } from '../../activities/tools/sandbox-uids';
import { tempDir } from '../helpers/config';

/** The old rule, to find two directories it gave the same uid. */
const hashedUid = (workdir: string) =>
  40_000 + (createHash('sha256').update(workdir).digest().readUInt32BE(0) % 20_000);

describe('sandbox uids', () => {
  it('gives two conversations whose directories collided under the old hash two uids, and each keeps its own', () => {
    const workdirs = path.join(tempDir(), 'workdirs');
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const dir = path.join(workdirs, `session_slack_C${i}`);
      const clash = seen.get(hashedUid(dir));
      if (clash) pair = [clash, dir];
      else seen.set(hashedUid(dir), dir);
    }
    const [a, b] = pair;
    expect(hashedUid(a)).toBe(hashedUid(b));
    const uidA = sandboxUid(a);
    const uidB = sandboxUid(b);
    expect(uidA).not.toBe(uidB);
    expect(Math.min(uidA, uidB)).toBeGreaterThanOrEqual(FIRST_SANDBOX_UID);
    expect(sandboxUid(a)).toBe(uidA);
  });

  it('hands out distinct uids to many conversations', () => {
    const workdirs = path.join(tempDir(), 'workdirs');
    const uids = Array.from({ length: 500 }, (_, i) => sandboxUid(path.join(workdirs, `session_web_${i}`)));
    expect(new Set(uids).size).toBe(500);
  });
});

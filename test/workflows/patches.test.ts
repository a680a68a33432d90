/** The patch budget: every patch call in the workflow code is registered, dated and counted (workflows/patches.ts). */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIVE_PATCHES, MAX_LIVE_PATCHES } from '../../workflows/patches';

const WORKFLOWS = path.resolve(__dirname, '../../workflows');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** Every `patched(` / `deprecatePatch(` call in the workflow code, with what it is given. */
function patchCalls(files: string[]): { file: string; kind: string; argument: string }[] {
  return files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/\b(patched|deprecatePatch)\s*\(\s*([^)]*)\)/g)].map((match) => ({
      file: path.relative(WORKFLOWS, file),
      kind: match[1]!,
      argument: match[2]!.trim(),
    })),
  );
}

const DAY = 86_400_000;

describe('patch budget', () => {
  const calls = patchCalls(sources(WORKFLOWS)).filter((call) => call.file !== 'patches.ts');

  it(`keeps at most ${MAX_LIVE_PATCHES} patches live`, () => {
    expect(LIVE_PATCHES.length).toBeLessThanOrEqual(MAX_LIVE_PATCHES);
    expect(new Set(calls.map((call) => call.argument)).size).toBeLessThanOrEqual(MAX_LIVE_PATCHES);
  });

  it('calls patches only with the string literal of a registered id, in the stage it is registered in', () => {
    for (const call of calls) {
      const id = /^'([a-z0-9-]+)'$/.exec(call.argument)?.[1];
      const registered = LIVE_PATCHES.find((patch) => patch.id === id);
      expect(
        registered,
        `${call.file}: ${call.kind}(${call.argument}) is not in workflows/patches.ts`,
      ).toBeDefined();
      expect(call.kind).toBe(registered!.stage === 'patched' ? 'patched' : 'deprecatePatch');
    }
  });

  it('dates every patch with a removal at most 90 days after it landed, and lists none that no call uses', () => {
    for (const patch of LIVE_PATCHES) {
      const added = Date.parse(patch.added);
      const removeBy = Date.parse(patch.removeBy);
      expect(Number.isFinite(added) && Number.isFinite(removeBy), patch.id).toBe(true);
      expect(removeBy - added, patch.id).toBeGreaterThan(0);
      expect(removeBy - added, patch.id).toBeLessThanOrEqual(90 * DAY);
      expect(
        calls.some((call) => call.argument === `'${patch.id}'`),
        patch.id,
      ).toBe(true);
    }
  });

  it('finds patch calls where they are (the scanner itself)', () => {
    const sample = path.join(mkdtempSync(path.join(os.tmpdir(), 'patches-')), 'sample.ts');
    writeFileSync(sample, "if (wf.patched('a-b')) x();\nwf.deprecatePatch( 'c' );\nwf.patched(ID);\n");
    expect(patchCalls([sample]).map(({ kind, argument }) => [kind, argument])).toEqual([
      ['patched', "'a-b'"],
      ['deprecatePatch', "'c'"],
      ['patched', 'ID'],
    ]);
  });
});

/**
 * The live `patched()` markers (docs/VERSIONING.md). A change to the command sequence ships as a new Worker
 * Deployment version; a patch is only for a change running workflows must take at once. Each one goes
 * `patched` -> `deprecatePatch` -> removal by its `removeBy` date, and at most five are live
 * (test/workflows/patches.test.ts fails the build otherwise, and on any patch call not listed here).
 *
 * Empty since the history epoch of 0.2.0 (docs/VERSIONING.md, "The 0.2 epoch").
 */
export interface LivePatch {
  /** The id given to `patched()` / `deprecatePatch()`, as a string literal at every call. */
  id: string;
  stage: 'patched' | 'deprecated';
  /** YYYY-MM-DD: when it landed, and when it must be gone (at most 90 days later). */
  added: string;
  removeBy: string;
  why: string;
}

export const LIVE_PATCHES: readonly LivePatch[] = [];

export const MAX_LIVE_PATCHES = 5;

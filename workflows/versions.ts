/**
 * Patch checks for workflow code: `patched(id)` instead of `wf.patched(id)`, and `startVersions()` first thing in
 * every workflow function.
 *
 * Why: every patch a run checks costs it a marker event and, added by the SDK core, an upsert of the
 * `TemporalChangeVersion` search attribute, each a write to the server's visibility store. A new conversation
 * checked about ten of them in its first turn (ten visibility writes before its first answer, more history to
 * replay). A run started by this code records one marker instead, `PATCHES_BASELINE`, and takes every patch of the
 * baseline as present without asking. Histories recorded before the baseline lack its marker: for them each patch
 * is asked about where it always was, so they replay exactly as they ran.
 *
 * A patch added after the baseline is not in BASELINE_PATCHES, so it is always asked about (runs recorded with the
 * baseline but before that patch must replay without it). Module state: each workflow has its own instance of
 * this module (it must never be preloaded, see workers/workflow-code.ts). Should the worker ever set the SDK's
 * patch activation callback, note that it is asked about the baseline only, not each patch it stands for.
 */
import * as wf from '@temporalio/workflow';
import { BASELINE_PATCHES, PATCHES_BASELINE } from './session/patches';

let baseline = false;

/** Records (or, replaying, finds) the baseline marker; call before anything that may check a patch. */
export function startVersions(): void {
  baseline = wf.patched(PATCHES_BASELINE);
}

/** Whether this run takes the patched path: a run with the baseline takes every baseline patch's. */
export function patched(id: string): boolean {
  return (baseline && BASELINE_PATCHES.includes(id)) || wf.patched(id);
}

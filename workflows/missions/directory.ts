/**
 * The old mission directory of everyone (`missions`, before directories per owner), on today's code: it hands each owner their
 * records (their own directory, owner-directory.ts) and ends. It gets here with no step of its own: the deploy's
 * drain asks it to continue as new, and its next run, on this version, carries every record.
 *
 * Until it has ended it still answers as it did (workers of the older version read it), and what older code sends
 * it meanwhile (a create, a rename, a mission's status) is passed on to the owner's directory. An older worker's
 * create after it ended starts it again, empty: it passes that create on and ends again.
 */
import * as wf from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import { missionDirectoryId } from '../../common/ids';
import { visibleTo } from '../../common/missions/addressing';
import type { MissionRecord } from '../../common/missions/types';
import { listenForUpgrade } from '../upgrade';
import {
  missionRecordSignal,
  missionRecordsQuery,
  registerMissionUpdate,
  renameMissionUpdate,
  visibleMissionsQuery,
} from './contract';

const { handOverMissions, forwardMissionRegistration, forwardMissionRename } = wf.proxyActivities<
  ReturnType<typeof createActivities>
>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['MissionRefused'] },
});

/** Records per hand-over activity: well under the 2 MB payload limit. */
const HAND_OVER_BATCH = 2_000;

/** The owner directory's answer, or its refusal in its own words (as the caller would have had it from here). */
async function passedOn(forwarded: Promise<MissionRecord>): Promise<MissionRecord> {
  try {
    return await forwarded;
  } catch (error) {
    if (error instanceof wf.ActivityFailure && error.cause instanceof wf.ApplicationFailure)
      throw wf.ApplicationFailure.create({ message: error.cause.message, nonRetryable: true });
    throw error;
  }
}

export async function missionDirectoryWorkflow(input: { records?: MissionRecord[] } = {}): Promise<void> {
  listenForUpgrade(); // it ends on its own; an `upgrade` from the drain changes nothing
  const records: MissionRecord[] = [...(input.records ?? [])];
  const ownerOf = (id: string) => records.find((r) => r.id === id)?.ownerId;
  wf.setHandler(missionRecordsQuery, () => records);
  wf.setHandler(visibleMissionsQuery, ({ userId }) => visibleTo(records, userId));
  wf.setHandler(registerMissionUpdate, (record) => passedOn(forwardMissionRegistration(record)));
  wf.setHandler(renameMissionUpdate, ({ id, newName }) => {
    const ownerId = ownerOf(id);
    if (!ownerId) throw wf.ApplicationFailure.create({ message: 'no such mission', nonRetryable: true });
    return passedOn(forwardMissionRename({ ownerId, id, newName }));
  });
  wf.setHandler(missionRecordSignal, async (change) => {
    const ownerId = change.ownerId ?? ownerOf(change.id);
    if (!ownerId) return;
    await wf
      .getExternalWorkflowHandle(missionDirectoryId(ownerId))
      .signal(missionRecordSignal, { ...change, ownerId })
      .catch((error: unknown) =>
        wf.log.warn('a mission record was not passed on', { id: change.id, error: String(error) }),
      );
  });
  for (let start = 0; start < records.length; start += HAND_OVER_BATCH)
    await handOverMissions({ records: records.slice(start, start + HAND_OVER_BATCH) });
  if (records.length) wf.log.info('mission directory handed over to owners', { missions: records.length });
  await wf.condition(wf.allHandlersFinished);
}

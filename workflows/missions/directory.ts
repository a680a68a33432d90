/**
 * The mission directory (`missions`): every mission's name, owner, sharing and status. Registration and
 * renames are updates validated here, so a name is unique per owner and "create, then fire by name" finds
 * the mission at once. Status changes arrive as signals from the mission workflows.
 */
import * as wf from '@temporalio/workflow';
import { continueOnCurrentVersion, listenForUpgrade, upgradeRequested } from '../upgrade';
import { visibleTo } from '../../common/missions/addressing';
import type { MissionRecord } from '../../common/missions/types';
import {
  missionRecordSignal,
  missionRecordsQuery,
  registerMissionUpdate,
  renameMissionUpdate,
  visibleMissionsQuery,
} from './contract';

const EVENTS_BEFORE_CONTINUE = 5_000;

const clash = (records: MissionRecord[], ownerId: string, name: string, except?: string) =>
  records.find(
    (r) => r.ownerId === ownerId && r.id !== except && r.name.toLowerCase() === name.toLowerCase(),
  );

export async function missionDirectoryWorkflow(input: { records?: MissionRecord[] } = {}): Promise<void> {
  listenForUpgrade();
  const records: MissionRecord[] = [...(input.records ?? [])];
  wf.setHandler(missionRecordsQuery, () => records);
  wf.setHandler(visibleMissionsQuery, ({ userId }) => visibleTo(records, userId));
  wf.setHandler(
    registerMissionUpdate,
    (record) => {
      const existing = records.find((r) => r.id === record.id);
      if (existing) return existing; // a retried create
      records.push(record);
      return record;
    },
    {
      validator: (record) => {
        if (!records.some((r) => r.id === record.id) && clash(records, record.ownerId, record.name))
          throw new Error(
            `you already have a mission named "${record.name}": pick another name, or update that one`,
          );
      },
    },
  );
  wf.setHandler(
    renameMissionUpdate,
    ({ id, newName }) => {
      const record = records.find((r) => r.id === id)!;
      record.name = newName;
      return record;
    },
    {
      validator: ({ id, newName }) => {
        const record = records.find((r) => r.id === id);
        if (!record) throw new Error('no such mission');
        if (clash(records, record.ownerId, newName, id))
          throw new Error(`you already have a mission named "${newName}"`);
      },
    },
  );
  wf.setHandler(missionRecordSignal, ({ id, status, shared }) => {
    const record = records.find((r) => r.id === id);
    if (!record) return;
    if (status) record.status = status;
    if (shared !== undefined) record.shared = shared;
  });
  await wf.condition(
    () =>
      upgradeRequested() ||
      wf.workflowInfo().continueAsNewSuggested ||
      wf.workflowInfo().historyLength > EVENTS_BEFORE_CONTINUE,
  );
  await wf.condition(wf.allHandlersFinished);
  await continueOnCurrentVersion<typeof missionDirectoryWorkflow>({ records });
}

/**
 * One owner's mission directory (`mission-directory:<owner>`): the names, sharing and status of that person's
 * missions. Registration and renames are updates validated here, so a name is unique per owner by construction and
 * "create, then fire by name" finds the mission at once; status changes arrive as signals from the missions. No
 * workflow holds every mission: an organization's creates and renames spread over one directory per person, and a
 * shared mission is found by others through visibility (AgentSharedMission). The rules: common/missions/owner-book.ts.
 */
import * as wf from '@temporalio/workflow';
import {
  applyRecord,
  importRecords,
  registrationRefusal,
  renameRefusal,
} from '../../common/missions/owner-book';
import type { MissionRecord } from '../../common/missions/types';
import { AgentOwner } from '../../common/search-attributes';
import { continueOnCurrentVersion, listenForUpgrade, timeToContinue } from '../upgrade';
import {
  importMissionsSignal,
  missionRecordSignal,
  missionRecordsQuery,
  registerMissionUpdate,
  renameMissionUpdate,
  type OwnerDirectoryInput,
} from './contract';

const EVENTS_BEFORE_CONTINUE = 5_000;

export async function missionOwnerDirectoryWorkflow(input: OwnerDirectoryInput): Promise<void> {
  listenForUpgrade();
  const { ownerId } = input;
  const records: MissionRecord[] = [...(input.records ?? [])];
  wf.upsertSearchAttributes([{ key: AgentOwner, value: ownerId }]);
  const mine = (record: { ownerId?: string }) => record.ownerId === undefined || record.ownerId === ownerId;

  wf.setHandler(missionRecordsQuery, () => records);
  wf.setHandler(
    registerMissionUpdate,
    (record) => {
      const existing = records.find((r) => r.id === record.id);
      if (existing) return existing; // a retried create
      records.push({ ...record });
      return record;
    },
    {
      validator: (record) => {
        if (record.ownerId !== ownerId) throw new Error("a mission is registered in its owner's directory");
        const refusal = registrationRefusal(records, record);
        if (refusal) throw new Error(refusal);
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
        const refusal = renameRefusal(records, id, newName);
        if (refusal) throw new Error(refusal);
      },
    },
  );
  wf.setHandler(missionRecordSignal, (change) => {
    if (!mine(change)) return;
    const known = records.find((r) => r.id === change.id);
    // A mission this directory does not know tells its whole record (it was created before the move, say).
    if (!known && (change.name === undefined || change.status === undefined)) return;
    applyRecord(records, {
      ...(known ?? { id: change.id, ownerId, shared: false, name: change.name!, status: change.status! }),
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.status !== undefined ? { status: change.status } : {}),
      ...(change.shared !== undefined ? { shared: change.shared } : {}),
    });
  });
  wf.setHandler(importMissionsSignal, ({ records: incoming }) => {
    importRecords(records, incoming.filter(mine));
  });

  await wf.condition(() => timeToContinue(EVENTS_BEFORE_CONTINUE));
  await wf.condition(wf.allHandlersFinished);
  await continueOnCurrentVersion<typeof missionOwnerDirectoryWorkflow>({ ownerId, records });
}

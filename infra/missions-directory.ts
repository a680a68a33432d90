/**
 * Finding missions without any workflow that holds them all: a person's own missions are in their directory
 * (`mission-directory:<owner>`, strongly consistent: "create, then fire by name" works at once), shared missions
 * of others are found through visibility by their name (AgentSharedMission, eventually consistent: a mission
 * shared a second ago may take that second to be found), and an id is described directly.
 *
 * While the old directory of everyone (`missions`, before directories per owner) still runs (pinned to an older version until the
 * deploy's drain moves it), a person's own records are also read from it; once it has handed them over and ended,
 * this process stops asking.
 */
import {
  QueryNotRegisteredError,
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { missionDirectoryId, missionWorkflowId } from '../common/ids';
import { MISSION_DIRECTORY_ID, type MissionRecord, type MissionStatus } from '../common/missions/types';
import {
  AgentMissionName,
  AgentMissionStatus,
  AgentOwner,
  AgentSharedMission,
} from '../common/search-attributes';
import {
  importMissionsSignal,
  missionRecordSignal,
  missionRecordsQuery,
  registerMissionUpdate,
  renameMissionUpdate,
  visibleMissionsQuery,
} from '../workflows/missions/contract';
import { quoted } from './temporal/deployment';

const MISSION_ID = /^mission:(.+)$/;
/** Shared namesakes read per lookup: more than two already make the name ambiguous. */
const NAMESAKES_READ = 10;

const legacyGone = new WeakSet<Client>();

/** The person's own missions (every status the directory keeps). */
export async function ownMissions(client: Client, ownerId: string): Promise<MissionRecord[]> {
  const [own, legacy] = await Promise.all([
    client.workflow
      .getHandle(missionDirectoryId(ownerId))
      .query(missionRecordsQuery)
      .catch((cause: unknown) => {
        if (cause instanceof WorkflowNotFoundError) return [];
        throw cause;
      }),
    legacyOwnMissions(client, ownerId),
  ]);
  return [...own, ...legacy.filter((r) => !own.some((o) => o.id === r.id))];
}

async function legacyOwnMissions(client: Client, ownerId: string): Promise<MissionRecord[]> {
  if (legacyGone.has(client)) return [];
  const directory = client.workflow.getHandle(MISSION_DIRECTORY_ID);
  try {
    const described = await directory.describe();
    if (described.status.name !== 'RUNNING') {
      legacyGone.add(client);
      return [];
    }
    const visible = await directory.query(visibleMissionsQuery, { userId: ownerId }).catch(async (cause) => {
      if (!(cause instanceof QueryNotRegisteredError)) throw cause;
      return await directory.query(missionRecordsQuery);
    });
    return visible.filter((r) => r.ownerId === ownerId);
  } catch (cause) {
    if (cause instanceof WorkflowNotFoundError) {
      legacyGone.add(client);
      return [];
    }
    throw cause;
  }
}

/** A mission's record as its own workflow's search attributes tell it, or undefined if it is not a mission. */
function recordOf(workflowId: string, attributes: WorkflowExecutionDescription['typedSearchAttributes']) {
  const id = MISSION_ID.exec(workflowId)?.[1];
  const name = attributes.get(AgentMissionName);
  const ownerId = attributes.get(AgentOwner);
  if (!id || !name || !ownerId) return undefined;
  const record: MissionRecord = {
    id,
    name,
    ownerId,
    shared: attributes.get(AgentSharedMission) !== undefined,
    status: (attributes.get(AgentMissionStatus) ?? 'active') as MissionStatus,
  };
  return record;
}

const sharedFilter = (name?: string) =>
  [
    `WorkflowType = 'missionWorkflow'`,
    `ExecutionStatus = 'Running'`,
    name === undefined
      ? `AgentSharedMission IS NOT NULL`
      : `AgentSharedMission = ${quoted(name.toLowerCase())}`,
  ].join(' AND ');

/** Shared missions (of anyone) with this name, case-insensitively: a few at most. */
export async function sharedMissionsNamed(client: Client, name: string): Promise<MissionRecord[]> {
  const found: MissionRecord[] = [];
  for await (const info of client.workflow.list({ query: sharedFilter(name), pageSize: NAMESAKES_READ })) {
    const record = recordOf(info.workflowId, info.typedSearchAttributes);
    if (record) found.push(record);
    if (found.length >= NAMESAKES_READ) break;
  }
  return found;
}

/** The newest shared missions, for a listing, and whether there are more than `limit`. */
export async function sharedMissions(
  client: Client,
  limit: number,
): Promise<{ records: MissionRecord[]; more: boolean }> {
  const records: MissionRecord[] = [];
  for await (const info of client.workflow.list({ query: sharedFilter(), pageSize: limit + 1 })) {
    if (records.length >= limit) return { records, more: true };
    const record = recordOf(info.workflowId, info.typedSearchAttributes);
    if (record) records.push(record);
  }
  return { records, more: false };
}

/** One mission by id, from its workflow (running or not), or undefined. */
export async function missionById(client: Client, id: string): Promise<MissionRecord | undefined> {
  try {
    const described = await client.workflow.getHandle(missionWorkflowId(id)).describe();
    return recordOf(described.workflowId, described.typedSearchAttributes);
  } catch (cause) {
    if (cause instanceof WorkflowNotFoundError) return undefined;
    throw cause;
  }
}

const ownerDirectoryStart = (taskQueue: string, ownerId: string) =>
  new WithStartWorkflowOperation('missionOwnerDirectoryWorkflow', {
    workflowId: missionDirectoryId(ownerId),
    taskQueue,
    args: [{ ownerId }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });

/** Registers a new mission in its owner's directory (started on first use); a refusal throws with its words. */
export async function registerMission(
  client: Client,
  taskQueue: string,
  record: MissionRecord,
): Promise<MissionRecord> {
  return await client.workflow.executeUpdateWithStart(registerMissionUpdate, {
    args: [record],
    startWorkflowOperation: ownerDirectoryStart(taskQueue, record.ownerId),
  });
}

export async function renameMission(
  client: Client,
  taskQueue: string,
  change: { ownerId: string; id: string; newName: string },
): Promise<MissionRecord> {
  return await client.workflow.executeUpdateWithStart(renameMissionUpdate, {
    args: [{ id: change.id, newName: change.newName }],
    startWorkflowOperation: ownerDirectoryStart(taskQueue, change.ownerId),
  });
}

/** The old directory's move: each owner's records into their own directory (idempotent: merged by id). */
export async function handOverToOwners(
  client: Client,
  taskQueue: string,
  records: readonly MissionRecord[],
): Promise<number> {
  const byOwner = new Map<string, MissionRecord[]>();
  for (const record of records) byOwner.set(record.ownerId, [...(byOwner.get(record.ownerId) ?? []), record]);
  for (const [ownerId, owned] of byOwner)
    await client.workflow.signalWithStart('missionOwnerDirectoryWorkflow', {
      workflowId: missionDirectoryId(ownerId),
      taskQueue,
      args: [{ ownerId }],
      signal: importMissionsSignal,
      signalArgs: [{ records: owned }],
    });
  return byOwner.size;
}

/**
 * A record whose mission workflow does not exist (its creation was cut off between the two, by a version before
 * creates were run again until they answered): marked completed, so it gives its name back and says it never ran.
 * If the create was still being run again, the mission's first step tells the directory its record as it is.
 */
export async function forgetUnstartedMission(client: Client, record: MissionRecord): Promise<void> {
  await client.workflow.getHandle(missionDirectoryId(record.ownerId)).signal(missionRecordSignal, {
    id: record.id,
    ownerId: record.ownerId,
    name: record.name,
    status: 'completed',
    shared: record.shared,
  });
}

/** A directory's refusal (an update validator's error), in its own words. */
export function refusalOf(cause: unknown): string {
  const message =
    (cause as { cause?: { message?: string }; message?: string }).cause?.message ?? (cause as Error).message;
  return message ?? 'the mission directory refused the change';
}

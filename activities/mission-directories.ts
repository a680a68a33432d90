/**
 * What the old directory of everyone (`missions`, before directories per owner) asks of the world while it moves: hand each owner
 * their records, and pass on the creates and renames older workers still send it. A refusal by the owner's
 * directory (a taken name) is not retried: it is the answer, in its own words.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { MissionRecord } from '../common/missions/types';
import { handOverToOwners, refusalOf, registerMission, renameMission } from '../infra/missions-directory';

async function refusedInWords<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (cause) {
    if (cause instanceof WorkflowUpdateFailedError)
      throw ApplicationFailure.create({
        type: 'MissionRefused',
        message: refusalOf(cause),
        nonRetryable: true,
      });
    throw cause;
  }
}

export function missionDirectoryActivities(client: Client, taskQueue: string) {
  return {
    async handOverMissions(request: { records: MissionRecord[] }): Promise<number> {
      return await handOverToOwners(client, taskQueue, request.records);
    },
    async forwardMissionRegistration(record: MissionRecord): Promise<MissionRecord> {
      return await refusedInWords(registerMission(client, taskQueue, record));
    },
    async forwardMissionRename(change: {
      ownerId: string;
      id: string;
      newName: string;
    }): Promise<MissionRecord> {
      return await refusedInWords(renameMission(client, taskQueue, change));
    },
  };
}

/**
 * Reading the mission directory for one person: the directory workflow answers with only the missions they see
 * (their own and shared ones), so a mission call or a page never carries everyone's missions. A directory still
 * running code from before that query existed (pinned to an older deployment version) is read whole, once, and
 * filtered here, until it continues as new on the current version.
 */
import { QueryNotRegisteredError, type Client } from '@temporalio/client';
import { visibleTo } from '../common/missions/addressing';
import { MISSION_DIRECTORY_ID, type MissionRecord } from '../common/missions/types';
import { missionRecordsQuery, visibleMissionsQuery } from '../workflows/missions/contract';

export async function readVisibleMissions(client: Client, userId: string): Promise<MissionRecord[]> {
  const directory = client.workflow.getHandle(MISSION_DIRECTORY_ID);
  try {
    return await directory.query(visibleMissionsQuery, { userId });
  } catch (cause) {
    if (!(cause instanceof QueryNotRegisteredError)) throw cause;
    return visibleTo(await directory.query(missionRecordsQuery), userId);
  }
}

/** What a mission is, as the directory, the mission workflow and the tools share it. Pure. */
export type MissionStatus = 'active' | 'paused' | 'completed' | 'failed';

export type Cadence =
  { kind: 'manual' } | { kind: 'webhook' } | { kind: 'cron'; expression: string; timezone: string };

export type NotifyMode = 'always' | 'notable';

/** A directory entry: enough to resolve names and ids and to check who may see a mission. */
export interface MissionRecord {
  id: string;
  name: string;
  ownerId: string;
  shared: boolean;
  status: MissionStatus;
}

export { missionDirectoryId, missionWorkflowId } from '../ids';
/** The old one directory of every mission (before directories per owner): at its next continue-as-new it hands each owner their records. */
export const MISSION_DIRECTORY_ID = 'missions';

export function describeCadence(cadence: Cadence): string {
  if (cadence.kind === 'cron') return `cron "${cadence.expression}" (${cadence.timezone})`;
  return cadence.kind === 'webhook' ? 'on webhook calls' : 'manual (fired on request)';
}

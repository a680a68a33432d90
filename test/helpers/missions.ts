/** Missions driven from a conversation, as their owner does: create, fire, and the run's gate shown here. */
import { WorkflowNotFoundError, type WorkflowClient } from '@temporalio/client';
import { missionDirectoryId } from '../../common/ids';
import type { MissionRecord } from '../../common/missions/types';
import { missionRecordsQuery } from '../../workflows/missions/contract';
import type { Gate, SessionView } from '../../workflows/session/contract';
import type { TestSession } from './session';

/** Creates a manual mission whose goal runs a shell command, fires it, and returns its run's gate as shown here. */
export async function firedMissionGate(s: TestSession, name: string): Promise<Gate> {
  await s.say(`call mission_create {"name": "${name}", "goal": "run \`echo ${name}\`", "cadence": "manual"}`);
  await s.idle();
  await s.say(`call mission_fire "${name}"`);
  const shown = await s.waitFor(
    (v) => v.gates.some((g) => g.remote && g.status === 'pending'),
    'the run gate',
  );
  return shown.gates.find((g) => g.remote && g.status === 'pending')!;
}

/** Waits for run `run` of the mission to post its result in this conversation. */
export function missionAnswered(
  s: TestSession,
  name: string,
  run = 1,
  timeoutMs?: number,
): Promise<SessionView> {
  return s.waitFor(
    (v) => v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith(`**${name}** (run ${run})`)),
    `run ${run} of ${name}`,
    timeoutMs,
  );
}

/** One owner's missions as their directory keeps them (tool results name missions only, never ids). */
export async function missionRecordsOf(client: WorkflowClient, ownerId: string): Promise<MissionRecord[]> {
  return await client
    .getHandle(missionDirectoryId(ownerId))
    .query(missionRecordsQuery)
    .catch((cause: unknown) => {
      if (cause instanceof WorkflowNotFoundError) return [];
      throw cause;
    });
}

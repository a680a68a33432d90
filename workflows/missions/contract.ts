/**
 * Missions: the directory workflow (`missions`, names -> ids, strongly consistent through updates) and one
 * workflow per mission (`mission:<id>`) whose runs are child session workflows (`mission-run:<id>:<n>`).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Cadence, MissionRecord, MissionStatus, NotifyMode } from '../../common/missions/types';
import type { Gate, GatewaySeal } from '../session/contract';

// --- directories: one per owner (`mission-directory:<owner>`), and the old one of everyone (`missions`) ---
export const registerMissionUpdate = defineUpdate<MissionRecord, [MissionRecord]>('registerMission');
export const renameMissionUpdate = defineUpdate<MissionRecord, [{ id: string; newName: string }]>(
  'renameMission',
);
/**
 * A mission tells its directory its record: at each change and at each start of an execution, so a directory that
 * missed one (it was moving) is right again at the mission's next step. Missions from before directories per owner send only the id,
 * status and sharing, to the old directory.
 */
export const missionRecordSignal =
  defineSignal<[{ id: string; status?: MissionStatus; shared?: boolean; name?: string; ownerId?: string }]>(
    'missionRecord',
  );
/** An owner directory: the owner's missions. The old directory: everyone's. */
export const missionRecordsQuery = defineQuery<MissionRecord[]>('missionRecords');
/** The old directory only: the missions one person sees (their own and shared ones). */
export const visibleMissionsQuery = defineQuery<MissionRecord[], [{ userId: string }]>('visibleMissions');
/** Records the old directory hands to an owner's directory when it moves (merged by id). */
export const importMissionsSignal = defineSignal<[{ records: MissionRecord[] }]>('importMissions');

export interface OwnerDirectoryInput {
  ownerId: string;
  records?: MissionRecord[];
}

// --- one mission ---
export interface MissionSettings {
  goal: string;
  cadence: Cadence;
  /** A session workflow id the results and prompts go to, or none. */
  notifySessionId: string | null;
  /**
   * The owner's conversation (where the mission was created or last told to report): its runs' gates and
   * its failures go there even with `notify: "none"`. Absent in missions created before it existed.
   */
  ownerSessionId?: string;
  notifyMode: NotifyMode;
  shared: boolean;
}

export interface MissionGuardrails {
  maxRunsPerDay: number;
  cooldownMs: number;
  maxConsecutiveFailures: number;
}

export interface RunRecord {
  n: number;
  workflowId: string;
  trigger: 'cron' | 'manual' | 'webhook' | 'catch-up';
  /** Someone other than the owner ran it (a shared mission): the run still acts as the owner. */
  firedBy?: string;
  startedAt: number;
  endedAt?: number;
  outcome?: 'ok' | 'failed' | 'cancelled';
  summary?: string;
  /** The fire that started it, when it carried an id (an A2A task reads its run by it). */
  fireId?: string;
  /** What people decided on the run's gates, in order (the latest 10): mission_history shows them. */
  decisions?: RunDecision[];
}

/** A fire or tick that started no run, and why; `fireId` when the fire carried one (an A2A task names its fire). */
export interface SkippedFire {
  at: number;
  reason: string;
  fireId?: string;
}

export interface RunDecision {
  /** The tool (or `budget`) the gate was about. */
  tool: string;
  /** approved, denied, answered, expired, …, as the gate's resolution says. */
  outcome: string;
  by: string;
  at: number;
}

export interface MissionInput {
  id: string;
  name: string;
  ownerId: string;
  settings: MissionSettings;
  guardrails: MissionGuardrails;
  carried?: MissionCarried;
  /**
   * The worker's seal of the creation (its owner's mission tool made it): the audit names the owner as its creator
   * only with it, as anyone who reaches Temporal could start a mission naming any owner.
   */
  createdSeal?: GatewaySeal;
}

/** What a mission's creation seal covers: what it was created with, under the name `missionCreated`. */
export function missionCreationCall(input: MissionInput): { signal: string; payload: unknown } {
  const { id, name, ownerId, settings, guardrails } = input;
  return { signal: 'missionCreated', payload: { id, name, ownerId, settings, guardrails } };
}

export interface MissionCarried {
  /** Seals of changes believed (MAC, when made), until they expire: a change copied from history is not believed again. */
  usedSeals?: [string, number][];
  status: MissionStatus;
  reason: string | null;
  runs: RunRecord[];
  skipped: SkippedFire[];
  consecutiveFailures: number;
  runCount: number;
  /** A run still in flight when the mission continued as new: its end arrives as `runEnded`. */
  running?: { workflowId: string; n: number } | null;
  gate?: RecordedGate | null;
  openGate?: Gate | null;
  /** The ids of the latest fires taken (absent before fires carried ids): a fire sent again is not a second fire. */
  fireIds?: string[];
}

/** How a run ended, told by the run itself (its mission may have continued as new since it started it). */
export interface RunEnd {
  runWorkflowId: string;
  result?: RunResult;
  failure?: { message: string; cancelled: boolean };
}

/** What the mission records when a run waits on a person. */
export interface RecordedGate {
  gateId: string;
  kind: Gate['kind'];
  tool: string;
  needed: string;
  runWorkflowId: string;
}

export interface MissionView {
  id: string;
  name: string;
  ownerId: string;
  settings: MissionSettings;
  guardrails: MissionGuardrails;
  status: MissionStatus;
  reason: string | null;
  runs: RunRecord[];
  skipped: SkippedFire[];
  consecutiveFailures: number;
  running: string | null;
  gate: RecordedGate | null;
  nextFireAt: number | null;
  /** The ids of the latest fires taken: a tool run sent again after an interruption finds its own fire here. */
  fireIds?: string[];
}

export interface FireRequest {
  by: string;
  trigger: 'manual' | 'webhook';
  context?: string;
  /**
   * Who sent this fire, once: a fire with an id the mission took already is dropped, so a sender cut off after
   * sending (a killed worker, a server that did not answer) may send it again without a second run.
   */
  fireId?: string;
}

export const fireSignal = defineSignal<[FireRequest]>('fire');
/** Changes in the owner's name, sealed by the mission tools (their second argument): see MissionEngine.audit. */
export const pauseSignal = defineSignal<[{ by: string; reason?: string }, GatewaySeal?]>('pause');
export const resumeSignal = defineSignal<[{ by: string }, GatewaySeal?]>('resume');
export const completeSignal = defineSignal<[{ by: string; reason?: string }, GatewaySeal?]>('complete');
export const updateMissionSignal =
  defineSignal<[{ by: string; name?: string; settings: Partial<MissionSettings> }, GatewaySeal?]>(
    'updateMission',
  );
/** From a run (child session): a gate opened or was decided. */
export const runGateSignal =
  defineSignal<
    [{ runWorkflowId: string; gate: Gate; resolved: boolean; outcome?: string; reminder?: boolean }]
  >('runGate');
/** From a run: a notice for one person (a refused click), relayed to the conversation they clicked in. */
export const runEndedSignal = defineSignal<[RunEnd]>('runEnded');
export const runNoticeSignal =
  defineSignal<[{ runWorkflowId: string; text: string; to: string }]>('runNotice');
export const missionViewQuery = defineQuery<MissionView>('mission');

/** A run's result, returned by the child session workflow. */
export interface RunResult {
  ok: boolean;
  answer: string;
  reason?: string;
}

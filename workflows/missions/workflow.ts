/**
 * One mission (`mission:<id>`): fires runs on its cadence (cron with time zone, manual, webhook), each a
 * child session workflow running the agent loop on the goal, so every run has its own page in the UI.
 * What each signal does and the loop that fires runs: mission-engine.ts.
 */
import * as wf from '@temporalio/workflow';
import { listenForUpgrade } from '../upgrade';
import {
  completeSignal,
  fireSignal,
  missionViewQuery,
  pauseSignal,
  resumeSignal,
  runEndedSignal,
  runGateSignal,
  runNoticeSignal,
  updateMissionSignal,
  type MissionInput,
} from './contract';
import { MissionEngine } from './mission-engine';

/**
 * PINNED; moves to the current version at its next continue-as-new, which may come at any point: a run in flight
 * goes on (on its own version, or the current one after its own hand-over) and tells the next execution its end.
 */
export async function missionWorkflow(input: MissionInput): Promise<void> {
  listenForUpgrade();
  const mission = new MissionEngine(input);
  wf.setHandler(missionViewQuery, () => mission.view());
  wf.setHandler(fireSignal, (request) => mission.onFire(request));
  wf.setHandler(pauseSignal, ({ by, reason }) => mission.onPause(by, reason));
  wf.setHandler(resumeSignal, ({ by }) => mission.onResume(by));
  wf.setHandler(completeSignal, ({ by, reason }) => mission.onComplete(by, reason));
  wf.setHandler(updateMissionSignal, ({ by, name, settings }) => mission.onUpdate(by, name, settings));
  wf.setHandler(runGateSignal, (report) => mission.onRunGate(report));
  wf.setHandler(runEndedSignal, (end) => mission.onRunEnded(end));
  wf.setHandler(runNoticeSignal, ({ runWorkflowId, text, to }) =>
    mission.onRunNotice(runWorkflowId, text, to),
  );
  await mission.run();
}

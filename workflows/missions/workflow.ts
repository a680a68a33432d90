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
  // Each change keeps what was sent, sealed: the audit names the owner only for a change the mission tools sealed.
  wf.setHandler(pauseSignal, (sent, seal) =>
    mission.onPause(sent.by, sent.reason, { signal: 'pause', sent, seal }),
  );
  wf.setHandler(resumeSignal, (sent, seal) => mission.onResume(sent.by, { signal: 'resume', sent, seal }));
  wf.setHandler(completeSignal, (sent, seal) =>
    mission.onComplete(sent.by, sent.reason, { signal: 'complete', sent, seal }),
  );
  wf.setHandler(updateMissionSignal, (sent, seal) =>
    mission.onUpdate(sent.by, sent.name, sent.settings, { signal: 'updateMission', sent, seal }),
  );
  wf.setHandler(runGateSignal, (report) => mission.onRunGate(report));
  wf.setHandler(runEndedSignal, (end) => mission.onRunEnded(end));
  wf.setHandler(runNoticeSignal, ({ runWorkflowId, text, to }) =>
    mission.onRunNotice(runWorkflowId, text, to),
  );
  await mission.run();
}

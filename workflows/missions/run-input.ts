/** What a mission run starts with: its goal (and the trigger's context) as the first message of a new session. */
import type { SessionInput } from '../session/contract';
import type { MissionSettings, RunRecord } from './contract';

export interface RunInputOptions {
  runWorkflowId: string;
  missionWorkflowId: string;
  ownerId: string;
  name: string;
  settings: MissionSettings;
  n: number;
  trigger: RunRecord['trigger'];
  context: string | undefined;
}

export function runInput(options: RunInputOptions): SessionInput {
  const { runWorkflowId, ownerId, name, settings, n, trigger, context } = options;
  const goalText = [
    settings.goal,
    context ? `\nContext from the trigger:\n${context}` : '',
    `\n(Mission "${name}", run ${n}, ${trigger}. Answer with what you found or did — the data, not a narration.${
      settings.notifyMode === 'notable'
        ? ' Start your answer with [notable] if it is worth telling the team, or with [routine] and why not.'
        : ''
    })`,
  ].join('');
  return {
    sessionId: runWorkflowId,
    channel: 'mission',
    ownerId,
    run: { missionWorkflowId: options.missionWorkflowId, missionName: name, shared: settings.shared },
    carried: {
      transcript: [],
      grants: [],
      notices: [],
      gates: [],
      inbox: [{ messageId: `${runWorkflowId}:goal`, userId: ownerId, text: goalText.slice(0, 20_000) }],
    },
  };
}

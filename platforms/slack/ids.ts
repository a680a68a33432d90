/** Slack conversation coordinates <-> session workflow ids: one thread, one session, no lookup table. */
import { slackSessionWorkflowIdOf } from '../../common/ids';

export interface SlackThread {
  team: string;
  channel: string;
  threadTs: string;
}

export function slackSessionWorkflowId(thread: SlackThread): string {
  return slackSessionWorkflowIdOf(thread.team, thread.channel, thread.threadTs);
}

export function parseSlackSessionId(workflowId: string): SlackThread | undefined {
  const match = /^session:slack:([A-Z0-9]+):([A-Z0-9]+):(\d+\.\d+)$/.exec(workflowId);
  return match ? { team: match[1]!, channel: match[2]!, threadTs: match[3]! } : undefined;
}

/** The `/agent` slash command: `/agent pending` re-posts what waits in this channel's conversations. */
import type { SlackCommandMiddlewareArgs } from '@slack/bolt';
import { slackChannelSessionPrefix } from '../../common/ids';
import type { SlackListenerContext } from './inbound-context';

export async function agentCommand(
  ctx: SlackListenerContext,
  { command, ack, respond }: SlackCommandMiddlewareArgs,
): Promise<void> {
  const { sessions } = ctx;
  await ack();
  const [verb] = command.text.trim().split(/\s+/);
  if (verb !== 'pending') {
    await respond({
      response_type: 'ephemeral',
      text: 'Usage: `/agent pending` re-posts the approvals and questions waiting in this channel.',
    });
    return;
  }
  const waiting = await sessions
    .waitingWithPrefix(slackChannelSessionPrefix(command.team_id, command.channel_id))
    .catch(() => undefined);
  if (!waiting) {
    await respond({
      response_type: 'ephemeral',
      text: "The agent's server cannot be reached right now; try `/agent pending` again in a moment.",
    });
    return;
  }
  for (const workflowId of waiting) await sessions.repostPending(workflowId, command.user_id).catch(() => {});
  await respond({
    response_type: 'ephemeral',
    text: waiting.length
      ? `Re-posting what is waiting in ${waiting.length} conversation(s) here.`
      : 'Nothing is waiting for a decision in this channel.',
  });
}

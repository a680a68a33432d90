/**
 * Slack buttons that open a dialog: Deny… (asks for a reason), Edit & approve… and Answer…. The submissions
 * are handled in inbound-submissions.ts.
 */
import type { View } from '@slack/types';
import { argsTooLarge, editableArgs } from '../../gateways/dialog-args';
import { denyModal, editModal, SLACK_ARGS_LIMIT } from './render';
import { answerModal } from './render-question';
import {
  DIALOG_BUDGET_MS,
  parseButton,
  tell,
  type ButtonArgs,
  type SlackListenerContext,
} from './inbound-context';

export async function openDenyDialog(args: ButtonArgs): Promise<void> {
  await args.ack();
  const value = parseButton(args.action.value);
  if (!value) return;
  await args.client.views.open({
    trigger_id: args.body.trigger_id,
    view: denyModal(JSON.stringify(value), 'this call'),
  });
}

/**
 * Edit & approve… and Answer… open their dialogs from the gate's memo (the server answers with no worker
 * running), so they work during a deploy; the submission is a signal the workflow judges when it runs.
 */
export async function openGateDialog(
  ctx: SlackListenerContext,
  args: ButtonArgs,
  kind: 'approval' | 'question',
): Promise<void> {
  await args.ack();
  const value = parseButton(args.action.value);
  if (!value) return;
  const gate = await ctx.sessions
    .gatePrompt(value.workflowId, value.gateId, DIALOG_BUDGET_MS)
    .catch((error: Error) => {
      ctx.log.warn('slack dialog not opened', { workflowId: value.workflowId, error: error.message });
      return undefined;
    });
  if (gate?.kind !== kind)
    return await tell(
      args.respond,
      `This ${kind === 'approval' ? 'call' : 'question'} is not open here, or the agent's server cannot be reached right now; try again in a moment.`,
    );
  if (gate.kind === 'question') return await openView(args, answerModal(JSON.stringify(value), gate));
  const text = editableArgs(gate.args, SLACK_ARGS_LIMIT);
  if (text === undefined)
    return await tell(args.respond, argsTooLarge(gate.toolName, gate.argsChars, SLACK_ARGS_LIMIT));
  await openView(args, editModal(JSON.stringify(value), { toolName: gate.toolName, args: text }));
}

async function openView(args: ButtonArgs, view: View): Promise<void> {
  await args.client.views.open({ trigger_id: args.body.trigger_id, view });
}

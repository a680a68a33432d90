/**
 * Slack dialog submissions (Deny…, Edit & approve…, Answer…) into signals. What the form itself can check
 * goes back under its field (`response_action: 'errors'`); the rest the workflow judges when it runs.
 */
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import { z } from 'zod';
import { answerSchema, type Answer } from '../../common/tools/ask-user';
import { parseSlackSessionId } from './ids';
import { sayRecordedIfNoWorker } from './recorded-notice';
import { answerErrors, readAnswers } from './render-question';
import { DIALOG_BUDGET_MS, parseButton, type SlackListenerContext } from './inbound-context';

/** What Bolt passes a view submission's listener (with its Web API client). */
type SubmitArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

/** The gate the dialog was opened for, as its button's value rides in the view's private metadata. */
const metadata = (args: SubmitArgs) => parseButton(args.view.private_metadata);

/** A dialog has no reply address: the "recorded" notice goes to the submitter privately, in the thread. */
function afterSubmit(
  ctx: SlackListenerContext,
  args: SubmitArgs,
  value: { workflowId: string; gateId: string },
) {
  const thread = parseSlackSessionId(value.workflowId);
  if (!thread) return;
  const user = args.body.user.id;
  void sayRecordedIfNoWorker(ctx, { ...value, userId: user }, (text) =>
    args.client.chat.postEphemeral({ channel: thread.channel, user, thread_ts: thread.threadTs, text }),
  );
}

/** A submitted answer too long or malformed for the answer schema: the reason under the field it came from. */
function answerShapeErrors(raw: readonly Answer[], error: z.ZodError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of error.issues) {
    const answer = typeof issue.path[0] === 'number' ? raw[issue.path[0]] : undefined;
    if (answer) errors[`${issue.path[1] === 'custom' ? 'qc' : 'q'}:${answer.question}`] = issue.message;
  }
  return errors;
}

export async function submitDenial(ctx: SlackListenerContext, args: SubmitArgs): Promise<void> {
  const value = metadata(args);
  if (!value) return await args.ack();
  const reason = args.view.state.values.reason?.value?.value?.trim();
  await ctx.sessions.decide(value.workflowId, {
    gateId: value.gateId,
    choice: 'deny',
    userId: args.body.user.id,
    ...(reason ? { reason } : {}),
  });
  await args.ack();
  afterSubmit(ctx, args, value);
}

export async function submitEdit(ctx: SlackListenerContext, args: SubmitArgs): Promise<void> {
  const value = metadata(args);
  if (!value) return await args.ack();
  const text = args.view.state.values.args?.value?.value ?? '';
  const parsed = z.record(z.string(), z.unknown()).safeParse(
    (() => {
      try {
        return JSON.parse(text);
      } catch {
        return undefined;
      }
    })(),
  );
  if (!parsed.success)
    return await args.ack({
      response_action: 'errors',
      errors: { args: 'Enter the arguments as a JSON object, e.g. {"command": "ls"}' },
    });
  await ctx.sessions.decide(value.workflowId, {
    gateId: value.gateId,
    choice: 'edit',
    args: parsed.data,
    userId: args.body.user.id,
  });
  await args.ack();
  afterSubmit(ctx, args, value);
}

export async function submitAnswers(ctx: SlackListenerContext, args: SubmitArgs): Promise<void> {
  const value = metadata(args);
  if (!value) return await args.ack();
  const raw = readAnswers(args.view.state.values);
  const answers = z.array(answerSchema).safeParse(raw);
  if (!answers.success)
    return await args.ack({ response_action: 'errors', errors: answerShapeErrors(raw, answers.error) });
  // Checked here when the questions can be read (no worker needed), so the reason shows in the form.
  const gate = await ctx.sessions
    .gatePrompt(value.workflowId, value.gateId, DIALOG_BUDGET_MS)
    .catch(() => undefined);
  const errors = gate?.kind === 'question' ? answerErrors(gate.questions, answers.data) : {};
  if (Object.keys(errors).length) return await args.ack({ response_action: 'errors', errors });
  await ctx.sessions.answer(value.workflowId, {
    gateId: value.gateId,
    userId: args.body.user.id,
    answers: answers.data,
  });
  await args.ack();
  afterSubmit(ctx, args, value);
}

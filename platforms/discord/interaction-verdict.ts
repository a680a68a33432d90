/**
 * A click or submission as a signal, then the workflow's verdict for the clicker: shown at once when it comes
 * quickly, followed up privately when it comes late, and a durable "recorded" when no worker answers.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { InteractionResponseType, type APIInteractionResponse } from 'discord-api-types/v10';
import type { AnswerDraft, Decision } from '../../workflows/session/contract';
import {
  deferUpdate,
  ephemeral,
  UNREACHABLE,
  type Interaction,
  type InteractionDeps,
} from './interaction-context';

/**
 * Discord's own limit is 3 s; every interaction is answered within FIRST_ANSWER_MS (deferred when the
 * verdict takes longer, then followed up), and a dialog's memo read is bounded by DIALOG_BUDGET_MS
 * (interaction-dialogs.ts).
 */
export const SIGNAL_BUDGET_MS = 1_200;
const FIRST_ANSWER_MS = 500;
const VERDICT_BUDGET_MS = 1_300;
const VERDICT_POLL_MS = 120;

const RECORDED =
  'Your click is recorded. The agent is not answering right now (restarting, or busy); it will act on it as soon as it can.';
const RECORDED_UNJUDGED = `${RECORDED.slice(0, -1)}, and tell you here if it cannot take it.`;

export async function decide(
  deps: InteractionDeps,
  interaction: Interaction,
  workflowId: string,
  decision: Decision,
): Promise<APIInteractionResponse> {
  return await signalThenReport(deps, interaction, workflowId, decision.gateId, decision.userId, () =>
    deps.sessions.decide(workflowId, decision),
  );
}

export async function draft(
  deps: InteractionDeps,
  interaction: Interaction,
  workflowId: string,
  value: AnswerDraft,
): Promise<APIInteractionResponse> {
  return await signalThenReport(deps, interaction, workflowId, value.gateId, value.userId, () =>
    deps.sessions.answerDraft(workflowId, value),
  );
}

/**
 * Signals, then waits briefly for the workflow's verdict: a refusal (not allowed, already decided,
 * invalid answer) is shown to the clicker only; an accepted click is acknowledged and the workflow
 * edits the prompt for everyone. With no worker running, the click is recorded durably, the clicker is
 * told so, and a refusal that comes later reaches them as an ephemeral follow-up.
 */
async function signalThenReport(
  deps: InteractionDeps,
  interaction: Interaction,
  workflowId: string,
  gateId: string,
  userId: string,
  signal: () => Promise<void>,
): Promise<APIInteractionResponse> {
  const verdict = verdictOf(deps, interaction, workflowId, gateId, userId, signal);
  const { lateOutcomes } = deps;
  const { token, application_id: applicationId } = interaction;
  if (!lateOutcomes || !token || !applicationId) return await verdict;
  let timer: NodeJS.Timeout | undefined;
  const first = await Promise.race([
    verdict,
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), FIRST_ANSWER_MS))),
  ]);
  clearTimeout(timer);
  if (first) return first;
  // Deferred: nothing shows yet; the verdict follows privately on the interaction's webhook.
  void verdict
    .then(async (response) => {
      const content =
        response.type === InteractionResponseType.ChannelMessageWithSource
          ? response.data?.content
          : undefined;
      if (content) await lateOutcomes.followUp({ applicationId, token }, content);
    })
    .catch((error: Error) => deps.log.warn('discord follow-up failed', { workflowId, error: error.message }));
  return deferUpdate;
}

/** The signal, then a bounded wait for the workflow's verdict (see signalThenReport). */
async function verdictOf(
  deps: InteractionDeps,
  interaction: Interaction,
  workflowId: string,
  gateId: string,
  userId: string,
  signal: () => Promise<void>,
): Promise<APIInteractionResponse> {
  const since = Date.now() - 1_000;
  const started = Date.now();
  try {
    await signal(); // bounded by the sessions' deadline (SIGNAL_BUDGET_MS)
  } catch (error) {
    if (error instanceof WorkflowNotFoundError)
      return ephemeral('That conversation has ended (or never existed here); nothing changed.');
    deps.log.warn('discord click not recorded', { workflowId, error: (error as Error).message });
    return ephemeral(UNREACHABLE);
  }
  const deadline = started + SIGNAL_BUDGET_MS + VERDICT_BUDGET_MS;
  while (Date.now() < deadline) {
    const left = deadline - Date.now();
    const feedback = await deps.sessions
      .clickOutcome(workflowId, { gateId, userId, since }, Math.max(50, left))
      .catch(() => undefined);
    if (!feedback) break; // no worker answering: the click waits durably
    if (feedback.checking) {
      // The click is still being checked (its gateway seal): what the workflow says now is from before it.
      await new Promise((resolve) => setTimeout(resolve, VERDICT_POLL_MS));
      continue;
    }
    if (feedback.notices.length) return ephemeral(feedback.notices.map((n) => n.text).join('\n'));
    const gate = feedback.gate;
    if (gate && gate.status !== 'pending') return deferUpdate;
    if (gate?.kind === 'question' && gate.drafts?.[userId]) {
      const answered = new Set(gate.drafts[userId].map((a) => a.question));
      const open = gate.questions.filter((q) => !answered.has(q.label)).map((q) => q.label);
      if (open.length < gate.questions.length)
        return ephemeral(`Noted. Still to answer: ${open.join(', ')}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, VERDICT_POLL_MS));
  }
  const { lateOutcomes } = deps;
  const watched =
    lateOutcomes !== undefined &&
    interaction.token !== undefined &&
    interaction.application_id !== undefined &&
    lateOutcomes.watch({
      applicationId: interaction.application_id,
      token: interaction.token,
      workflowId,
      gateId,
      userId,
      since,
    });
  return ephemeral(watched ? RECORDED_UNJUDGED : RECORDED);
}

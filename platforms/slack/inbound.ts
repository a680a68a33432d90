/**
 * Slack inbound: Bolt listeners that parse, authenticate (Bolt verifies the signing secret) and signal.
 * Every action and view listener acknowledges within Slack's 3 seconds, also while no worker runs:
 * signals need only the Temporal server. A message event is answered only once its signal is accepted
 * (otherwise Slack retries it, or the sender is told). Nothing pending is kept here.
 *
 * This file is the table of listeners; each job's listeners live in inbound-*.ts: messages, buttons,
 * dialogs, their submissions and the slash command.
 */
import type { App, BlockAction, ButtonAction, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from '../../infra/log';
import type { Sessions } from '../../gateways/sessions';
import { slackAssistant, type SuggestedPrompt } from './assistant';
import type { SlackListenerContext } from './inbound-context';
import { takeAssistantMessage, takeMention, takeMessage } from './inbound-messages';
import { decideFromButton, recordFeedback, sendConnectLink, stopTurn } from './inbound-buttons';
import { openDenyDialog, openGateDialog } from './inbound-dialogs';
import { submitAnswers, submitDenial, submitEdit } from './inbound-submissions';
import { agentCommand } from './inbound-command';

export function registerSlackListeners(
  app: App,
  sessions: Sessions,
  log: Logger,
  connect: (userId: string, provider: string) => { url: string; providerName: string } | undefined,
  /** Over HTTP, a listener's error makes the answer a 500 (Slack retries); Socket Mode acks events first. */
  slackRetries = true,
  /** SLACK_ASSISTANT=on: the assistant container's threads, with these suggested prompts (assistant.ts). */
  assistant?: { prompts: readonly SuggestedPrompt[] },
): void {
  const ctx: SlackListenerContext = { sessions, log, connect, slackRetries };

  app.action('answer_feedback', (args) => recordFeedback(ctx, args));
  app.action<BlockAction<ButtonAction>>('gate_connect', (args) => sendConnectLink(ctx, args));
  // The link button opens the browser; Slack still sends the click, which needs only an ack.
  app.action('gate_connect_link', async ({ ack }) => await ack());

  app.event('app_mention', (args) => takeMention(ctx, args));
  if (assistant)
    app.assistant(
      slackAssistant({
        prompts: assistant.prompts,
        log,
        onMessage: (event, team, client, retryNum) =>
          takeAssistantMessage(ctx, event, team, client, retryNum),
      }),
    );
  app.message((args) => takeMessage(ctx, args));

  app.action<BlockAction<ButtonAction>>('turn_stop', (args) => stopTurn(ctx, args));
  app.action<BlockAction<ButtonAction>>('gate_approve', (args) => decideFromButton(ctx, args));
  app.action<BlockAction<ButtonAction>>('gate_always_session', (args) =>
    decideFromButton(ctx, args, { scope: 'session' }),
  );
  app.action<BlockAction<ButtonAction>>('gate_always_user', (args) =>
    decideFromButton(ctx, args, { scope: 'user' }),
  );

  app.action<BlockAction<ButtonAction>>('gate_deny', (args) => openDenyDialog(args));
  app.action<BlockAction<ButtonAction>>('gate_edit', (args) => openGateDialog(ctx, args, 'approval'));
  app.action<BlockAction<ButtonAction>>('gate_answer', (args) => openGateDialog(ctx, args, 'question'));

  app.view<ViewSubmitAction>('gate_deny', (args) => submitDenial(ctx, args));
  app.view<ViewSubmitAction>('gate_edit', (args) => submitEdit(ctx, args));
  app.view<ViewSubmitAction>('gate_answer', (args) => submitAnswers(ctx, args));

  app.command(/^\/agent/, (args) => agentCommand(ctx, args));
}

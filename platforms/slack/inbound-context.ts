/**
 * What the Slack listeners share: the context registerSlackListeners hands each of them, the shapes of Slack
 * ids, the gate buttons' value and the private reply to a clicker.
 */
import type {
  AllMiddlewareArgs,
  BlockAction,
  ButtonAction,
  RespondFn,
  SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../../infra/log';
import type { Sessions } from '../../gateways/sessions';
import { gateButtonValueSchema, type GateButtonValue } from '../../workflows/session/contract';
import { parseSlackSessionId } from './ids';

/** The state every listener needs, passed explicitly rather than captured. */
export interface SlackListenerContext {
  sessions: Sessions;
  log: Logger;
  /** The clicker's personal sign-in link for a provider, or undefined when it is not configured here. */
  connect: (userId: string, provider: string) => { url: string; providerName: string } | undefined;
  /** Over HTTP, a listener's error makes the answer a 500 (Slack retries); Socket Mode acks events first. */
  slackRetries: boolean;
}

/** A click on one of our buttons, with the client to open a dialog. */
export type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

export const slackId = z.string().regex(/^[A-Z0-9]{1,32}$/);
export const slackTs = z.string().regex(/^\d{1,12}\.\d{1,9}$/);

/** A dialog must open within Slack's 3 s (trigger ids expire); the memo read is bounded well inside. */
export const DIALOG_BUDGET_MS = 800;

/** An ephemeral reply to the clicker only. */
export async function tell(respond: RespondFn, text: string): Promise<void> {
  await respond({ response_type: 'ephemeral', replace_original: false, text });
}

export function parseButton(raw: string | undefined): GateButtonValue | undefined {
  try {
    const parsed = gateButtonValueSchema.safeParse(JSON.parse(raw ?? ''));
    return parsed.success && parseSlackSessionId(parsed.data.workflowId) ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Slack's AI-app surface (SLACK_ASSISTANT=on, for an app with "Agents & AI Apps" turned on): Bolt's Assistant
 * handles the assistant container. A new thread gets the policy's suggested prompts; a person's message there
 * is a conversation message like a DM's, and names the thread (its title) and shows "is working…" at once.
 * The worker's outbound sets and clears that status as turns run (outbound.ts). Mentions, channels and plain
 * DMs keep their classic behaviour.
 */
import { Assistant } from '@slack/bolt';
import type { Logger } from '../../infra/log';
import { WORKING_STATUS } from './render';

export interface SuggestedPrompt {
  title: string;
  message: string;
}

/** Threads named since this gateway started (a restart names a thread again: harmless). */
const TITLED_LIMIT = 10_000;

export function slackAssistant(options: {
  prompts: readonly SuggestedPrompt[];
  log: Logger;
  /** The gateway's DM handling: the message becomes a session message (or an error is told). */
  onMessage: (
    event: unknown,
    team: unknown,
    client: unknown,
    retryNum: number | undefined,
  ) => Promise<boolean>;
}): Assistant {
  const titled = new Set<string>();
  return new Assistant({
    // The thread's context (the channel it was opened from) is not used: no store, no extra API calls.
    threadContextStore: { get: async () => ({}), save: async () => {} },
    threadStarted: async ({ setSuggestedPrompts }) => {
      if (!options.prompts.length) return;
      await setSuggestedPrompts({ title: 'Try asking', prompts: [...options.prompts] }).catch(
        (error: Error) => options.log.warn('slack suggested prompts not set', { error: error.message }),
      );
    },
    userMessage: async (args) => {
      const { message, body, client, context, setStatus, setTitle } = args;
      const taken = await options.onMessage(
        message,
        (body as { team_id?: unknown }).team_id,
        client,
        context.retryNum,
      );
      if (!taken) return;
      const thread = message as { channel: string; thread_ts?: string; text?: string };
      const key = `${thread.channel}:${thread.thread_ts}`;
      const tell = (what: string) => (error: Error) =>
        options.log.warn(`slack ${what} not set`, { error: error.message });
      await setStatus(WORKING_STATUS).catch(tell('status'));
      if (titled.has(key) || !thread.text) return;
      if (titled.size >= TITLED_LIMIT) titled.clear();
      titled.add(key);
      await setTitle(thread.text.replace(/\s+/g, ' ').slice(0, 80)).catch(tell('title'));
    },
  });
}

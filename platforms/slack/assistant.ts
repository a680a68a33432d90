/**
 * Slack's AI-app surface (SLACK_ASSISTANT=on, for an app with "Agents & AI Apps" turned on): Bolt's Assistant
 * handles the assistant container. A new thread gets the policy's suggested prompts; a person's message there
 * is a conversation message like a DM's, and its first one names the thread. The worker's outbound sets and
 * clears "is working…" as turns run (outbound.ts). Slack's extra calls are never awaited: the listener answers
 * within Slack's 3 seconds whatever Slack's API does. Mentions and channels keep their classic behaviour.
 */
import { Assistant } from '@slack/bolt';
import type { Logger } from '../../infra/log';

export interface SuggestedPrompt {
  title: string;
  message: string;
}

/** Threads named since this gateway started (a restart names a thread again: harmless). */
const TITLED_LIMIT = 10_000;

export function slackAssistant(options: {
  prompts: readonly SuggestedPrompt[];
  log: Logger;
  /** The gateway's DM handling: the message's text when it became a session message, else undefined. */
  onMessage: (
    event: unknown,
    team: unknown,
    client: unknown,
    retryNum: number | undefined,
  ) => Promise<string | undefined>;
}): Assistant {
  const titled = new Set<string>();
  return new Assistant({
    // The thread's context (the channel it was opened from) is not used: no store, no extra API calls.
    threadContextStore: { get: async () => ({}), save: async () => {} },
    threadStarted: async ({ setSuggestedPrompts }) => {
      if (!options.prompts.length) return;
      void setSuggestedPrompts({ title: 'Try asking', prompts: [...options.prompts] }).catch((error: Error) =>
        options.log.warn('slack suggested prompts not set', { error: error.message }),
      );
    },
    userMessage: async (args) => {
      const { message, body, client, context, setTitle } = args;
      const text = await options.onMessage(
        message,
        (body as { team_id?: unknown }).team_id,
        client,
        context.retryNum,
      );
      // A retry of a message already taken names nothing again.
      if (text === undefined || context.retryNum) return;
      const thread = message as { channel: string; thread_ts?: string };
      const key = `${thread.channel}:${thread.thread_ts}`;
      // First message since this gateway started: a restart may name a thread again after a later message.
      if (titled.has(key)) return;
      if (titled.size >= TITLED_LIMIT) titled.clear();
      titled.add(key);
      void setTitle(text.replace(/\s+/g, ' ').slice(0, 80)).catch((error: Error) =>
        options.log.warn('slack title not set', { error: error.message }),
      );
    },
  });
}

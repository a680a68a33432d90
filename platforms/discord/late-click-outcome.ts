/**
 * A personal notice for a click the workflow could not judge within Discord's 3 seconds (every worker
 * down for a deploy, say). Discord shows personal messages only as ephemeral interaction replies, so the
 * gateway keeps watching the workflow for the click's verdict and, if the click was refused, tells the
 * clicker in an ephemeral follow-up on the interaction's webhook. Interaction tokens live 15 minutes, so
 * the watch ends just before; after that the edited prompt still shows the outcome to everyone.
 *
 * The token stays in this process's memory: it is never signalled, stored or logged.
 */
import type { REST } from '@discordjs/rest';
import { MessageFlags, Routes } from 'discord-api-types/v10';
import type { Logger } from '../../infra/log';
import type { Sessions } from '../../gateways/sessions';
import { discordMentions } from './render';

/** Interaction tokens are valid for 15 minutes; stop with a margin. */
const WATCH_FOR_MS = 14 * 60_000;
const FIRST_LOOK_MS = 1_000;
const LONGEST_PAUSE_MS = 5_000;
const QUERY_BUDGET_MS = 3_000;
/** During a long outage every click starts a watch; each polls, so their number is bounded. */
const MAX_WATCHES = 500;

export interface UnjudgedClick {
  applicationId: string;
  token: string;
  workflowId: string;
  gateId: string;
  userId: string;
  /** Workflow time (ms) from which a notice to this person answers this click. */
  since: number;
}

export class LateClickOutcome {
  /** One watch per person, gate and conversation: a second click replaces the first (its token is newer). */
  private readonly watches = new Map<string, AbortController>();

  constructor(
    private readonly options: {
      rest: REST;
      sessions: Sessions;
      log: Logger;
      watchForMs?: number;
      maxWatches?: number;
    },
  ) {}

  /**
   * Watches in the background (the interaction has already been answered). False when too many watches run
   * already: the click still counts, only the private follow-up is not promised.
   */
  watch(click: UnjudgedClick): boolean {
    const key = `${click.workflowId}\n${click.gateId}\n${click.userId}`;
    this.watches.get(key)?.abort();
    this.watches.delete(key);
    if (this.watches.size >= (this.options.maxWatches ?? MAX_WATCHES)) return false;
    const controller = new AbortController();
    this.watches.set(key, controller);
    void this.run(click, controller.signal)
      .catch((error: unknown) =>
        this.options.log.warn('discord late feedback failed', {
          workflowId: click.workflowId,
          error: (error as Error).message,
        }),
      )
      .finally(() => {
        if (this.watches.get(key) === controller) this.watches.delete(key);
      });
    return true;
  }

  /** Gateway shutdown: the watches end (the edited prompt still tells everyone the outcome). */
  stop(): void {
    for (const controller of this.watches.values()) controller.abort();
    this.watches.clear();
  }

  get watching(): number {
    return this.watches.size;
  }

  private async run(click: UnjudgedClick, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + (this.options.watchForMs ?? WATCH_FOR_MS);
    let pause = FIRST_LOOK_MS;
    while (Date.now() + pause < deadline) {
      await sleep(pause, signal);
      if (signal.aborted) return;
      pause = Math.min(LONGEST_PAUSE_MS, Math.round(pause * 1.5));
      const feedback = await this.options.sessions
        .clickOutcome(
          click.workflowId,
          { gateId: click.gateId, userId: click.userId, since: click.since },
          QUERY_BUDGET_MS,
        )
        .catch(() => undefined); // still no worker answering: look again later
      // Still checking a seal: the outcome is not known yet.
      if (!feedback || signal.aborted || feedback.checking) continue;
      if (feedback.notices.length) {
        await this.followUp(click, feedback.notices.map((n) => n.text).join('\n'));
        return;
      }
      // Accepted: the prompt's edit tells everyone, the clicker included. Nothing personal to add.
      const gate = feedback.gate;
      if (!gate || gate.status !== 'pending' || (gate.kind === 'question' && gate.drafts?.[click.userId]))
        return;
    }
  }

  /** A private message to the person behind an interaction, on its webhook (within 15 minutes). */
  async followUp(click: Pick<UnjudgedClick, 'applicationId' | 'token'>, content: string): Promise<void> {
    await this.options.rest.post(Routes.webhook(click.applicationId, click.token), {
      auth: false,
      body: {
        content: discordMentions(content).slice(0, 2_000),
        flags: MessageFlags.Ephemeral,
        allowed_mentions: { parse: [] },
      },
    });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * A2A push notifications, driven by the conversation itself so they survive restarts and deploys: for each task an
 * A2A client asked to be told about, a change of what the task's state depends on (the turn's status, the open gates,
 * the latest answer) has the `pushA2aTasks` activity read the task as each receiver's person reads it and post it if
 * it changed since the last push. The receivers' addresses and tokens stay in the vault; this holds task ids and
 * what was last pushed. A receiver that did not answer is owed its push: asked again on a durable timer, backing off
 * from 30 s to 30 min, for at most OWED_FOR_MS, whether or not the conversation changes meanwhile. Nothing here runs
 * in a conversation nobody asked pushes for.
 */
import * as wf from '@temporalio/workflow';
import type { CarriedState } from './contract';
import type { SessionState } from './state';
import { failureMessage, pushA2aTasks } from './session-activities';

/** Tasks of one conversation followed at once; the oldest is dropped beyond this. */
const MAX_TASKS = 50;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 30 * 60_000;
/** How long a receiver that does not answer is owed a push before it is given up. */
const OWED_FOR_MS = 3 * 24 * 3_600_000;

interface Followed {
  sent?: string;
  /** Bumped by each new follow: a round that started before it cannot end the task's following. */
  generation: number;
  /** Since when a receiver is owed a push (it failed), if one is. */
  owedSince?: number;
}

export class A2aPushes {
  private readonly tasks = new Map<string, Followed>();
  private started = false;
  private lastKey = '';
  private retryMs = FIRST_RETRY_MS;

  constructor(
    private readonly sessionId: string,
    private readonly state: SessionState,
    carried: CarriedState['a2aPush'],
  ) {
    for (const { taskId, sent, owedSince } of carried ?? [])
      this.tasks.set(taskId, {
        generation: 0,
        ...(sent ? { sent } : {}),
        ...(owedSince ? { owedSince } : {}),
      });
    if (this.tasks.size) this.start();
  }

  /** A client set a push config on this task: follow it (again, if its earlier configs were all pushed to the end). */
  follow(taskId: string): void {
    const known = this.tasks.get(taskId);
    this.tasks.delete(taskId); // the newest last: the oldest is the one dropped when too many are followed
    this.tasks.set(taskId, { ...known, generation: (known?.generation ?? 0) + 1 });
    while (this.tasks.size > MAX_TASKS) this.tasks.delete(this.tasks.keys().next().value!);
    this.lastKey = ''; // the new receiver is told the task's state now, not at its next change
    this.start();
  }

  carry(): Pick<CarriedState, 'a2aPush'> {
    if (!this.tasks.size) return {};
    return {
      a2aPush: [...this.tasks].map(([taskId, t]) => ({
        taskId,
        ...(t.sent ? { sent: t.sent } : {}),
        ...(t.owedSince ? { owedSince: t.owedSince } : {}),
      })),
    };
  }

  /** What a task's state is made of: a change here may change some task's state. */
  private key(): string {
    const open = [...this.state.gates.values()]
      .filter((g) => g.status === 'pending')
      .map((g) => `${g.id}:${g.kind === 'approval' ? (g.approvals?.length ?? 0) : 0}`)
      .join(',');
    const last = this.state.transcript.at(-1);
    return `${this.state.status}|${open}|${this.state.transcript.length && last?.role === 'assistant' ? last.id : ''}|${this.state.inbox.length}`;
  }

  private owed(): boolean {
    return [...this.tasks.values()].some((t) => t.owedSince !== undefined);
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    void this.keepPushing();
  }

  private async keepPushing(): Promise<void> {
    for (;;) {
      try {
        const changed = () => this.tasks.size > 0 && this.key() !== this.lastKey;
        // A receiver owed a push is asked again after the back-off, change or not.
        if (this.owed()) await wf.condition(changed, this.retryMs);
        else await wf.condition(changed);
      } catch (error) {
        if (wf.isCancellation(error)) return;
        throw error;
      }
      this.lastKey = this.key();
      const round = new Map([...this.tasks].map(([taskId, t]) => [taskId, t.generation]));
      try {
        const pushed = await pushA2aTasks({
          workflowId: this.sessionId,
          tasks: [...this.tasks].map(([taskId, t]) => ({ taskId, ...(t.sent ? { sent: t.sent } : {}) })),
        });
        let anyOwed = false;
        for (const { taskId, sent, done, owed } of pushed) {
          const followed = this.tasks.get(taskId);
          if (!followed) continue;
          // Followed again while this round ran (a new receiver): its push is still to come.
          if (done && followed.generation === round.get(taskId)) {
            this.tasks.delete(taskId);
            continue;
          }
          if (sent) followed.sent = sent;
          if (owed) {
            followed.owedSince ??= Date.now();
            if (Date.now() - followed.owedSince > OWED_FOR_MS) {
              // Given up: the receiver is told nothing more of what it missed, only of later changes.
              wf.log.warn('an A2A push receiver did not answer for days; its missed pushes are given up', {
                taskId,
              });
              delete followed.owedSince;
            } else anyOwed = true;
          } else delete followed.owedSince;
        }
        this.retryMs = anyOwed ? Math.min(this.retryMs * 2, MAX_RETRY_MS) : FIRST_RETRY_MS;
      } catch (error) {
        // The conversation could not be read or the vault not opened: asked again after the back-off.
        wf.log.warn('pushing A2A task changes failed', { error: failureMessage(error) });
        for (const t of this.tasks.values()) t.owedSince ??= Date.now();
        this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
      }
    }
  }
}

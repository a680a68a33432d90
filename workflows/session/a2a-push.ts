/**
 * A2A push notifications, driven by the conversation itself so they survive restarts and deploys: for each task an
 * A2A client asked to be told about, a change of what the task's state depends on (the turn's status, the open gates,
 * the latest answer) has the `pushA2aTasks` activity read the task as each receiver's person reads it and post it if
 * it changed since the last push. The receivers' addresses and tokens stay in the vault; this holds task ids and
 * what was last pushed. Nothing here runs in a conversation nobody asked pushes for.
 */
import * as wf from '@temporalio/workflow';
import type { CarriedState } from './contract';
import type { SessionState } from './state';
import { failureMessage, pushA2aTasks } from './session-activities';

/** Tasks of one conversation followed at once; the oldest is dropped beyond this. */
const MAX_TASKS = 20;

export class A2aPushes {
  private readonly tasks = new Map<string, string | undefined>();
  private pushing = false;
  private started = false;
  private lastKey = '';

  constructor(
    private readonly sessionId: string,
    private readonly state: SessionState,
    carried: CarriedState['a2aPush'],
  ) {
    for (const { taskId, sent } of carried ?? []) this.tasks.set(taskId, sent);
    if (this.tasks.size) this.start();
  }

  /** A client set a push config on this task: follow it (again, if its earlier configs were all pushed to the end). */
  follow(taskId: string): void {
    if (!this.tasks.has(taskId)) this.tasks.set(taskId, undefined);
    while (this.tasks.size > MAX_TASKS) this.tasks.delete(this.tasks.keys().next().value!);
    this.lastKey = ''; // the new receiver is told the task's state now, not at its next change
    this.start();
  }

  carry(): Pick<CarriedState, 'a2aPush'> {
    if (!this.tasks.size) return {};
    return { a2aPush: [...this.tasks].map(([taskId, sent]) => ({ taskId, ...(sent ? { sent } : {}) })) };
  }

  get idle(): boolean {
    return !this.pushing;
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

  private start(): void {
    if (this.started) return;
    this.started = true;
    void this.keepPushing();
  }

  private async keepPushing(): Promise<void> {
    for (;;) {
      try {
        await wf.condition(() => this.tasks.size > 0 && this.key() !== this.lastKey);
      } catch (error) {
        if (wf.isCancellation(error)) return;
        throw error;
      }
      this.lastKey = this.key();
      this.pushing = true;
      try {
        const pushed = await pushA2aTasks({
          workflowId: this.sessionId,
          tasks: [...this.tasks].map(([taskId, sent]) => ({ taskId, ...(sent ? { sent } : {}) })),
        });
        for (const { taskId, sent, done } of pushed) {
          if (done) this.tasks.delete(taskId);
          else if (this.tasks.has(taskId) && sent) this.tasks.set(taskId, sent);
        }
      } catch (error) {
        // A receiver that stays down loses this change, not the conversation: the next change is pushed again.
        wf.log.warn('pushing A2A task changes failed', { error: failureMessage(error) });
      } finally {
        this.pushing = false;
      }
    }
  }
}

/**
 * E-mail as a channel of every gate: when SMTP is configured (settings.email), each gate that opens here is mailed,
 * once, to the people who may decide it (the `mailGates` activity finds their verified addresses and signs each one a
 * single-use link to a confirm page). Decisions never come back by mail: the page decides, signed in, on a POST.
 * A gate shown here for a mission's run (`remote`) is mailed by the run itself.
 */
import * as wf from '@temporalio/workflow';
import type { CarriedState, Gate } from './contract';
import type { SessionSettings } from './settings';
import type { SessionState } from './state';
import { failureMessage, mailGates } from './session-activities';

export class GateMail {
  private readonly mailed: Set<string>;
  private sending = false;

  constructor(
    private readonly sessionId: string,
    private readonly channel: string,
    private readonly state: SessionState,
    private readonly settings: () => SessionSettings,
    carried: CarriedState['mailedGates'],
  ) {
    this.mailed = new Set(carried ?? []);
    void this.keepMailing();
  }

  carry(): Pick<CarriedState, 'mailedGates'> {
    const open = new Set(this.state.pendingGates().map((g) => g.id));
    const mailed = [...this.mailed].filter((id) => open.has(id));
    return mailed.length ? { mailedGates: mailed } : {};
  }

  get idle(): boolean {
    return !this.sending;
  }

  private unmailed(): Gate[] {
    if (!this.settings().email) return [];
    return this.state.pendingGates().filter((g) => !g.remote && !this.mailed.has(g.id));
  }

  private async keepMailing(): Promise<void> {
    for (;;) {
      try {
        await wf.condition(() => this.unmailed().length > 0);
      } catch (error) {
        if (wf.isCancellation(error)) return;
        throw error;
      }
      const gates = this.unmailed();
      for (const gate of gates) this.mailed.add(gate.id);
      this.sending = true;
      try {
        await mailGates({ workflowId: this.sessionId, channel: this.channel, gates });
      } catch (error) {
        // The gate still waits where it was shown; only its mail is lost (the log says why).
        wf.log.warn('mailing gates failed', { error: failureMessage(error) });
      } finally {
        this.sending = false;
      }
    }
  }
}

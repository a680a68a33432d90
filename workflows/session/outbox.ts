/**
 * The ordered outbox: what chat platforms are told (agent text, gates, notices) and what a mission run reports
 * to its mission, delivered one at a time, in order, by a loop that lives as long as the workflow. What a
 * platform does not take after every retry is told there once a delivery goes through again.
 */
import * as wf from '@temporalio/workflow';
import { runGateSignal, runNoticeSignal } from '../missions/contract';
import type { Gate, SessionInput } from './contract';
import type { OutboundEvent } from './outbound';
import { deliver, failureMessage } from './session-activities';

const MAX_UNDELIVERED = 10;

export class Outbox {
  private readonly events: OutboundEvent[] = [];
  private delivering = false;
  /** What a platform did not take after every retry: told there once a delivery goes through again. */
  private undelivered: { what: string; reason: string }[] = [];
  /** The post telling them, while it is on its way: if it fails too, what it told is kept for the next one. */
  private telling: { event: OutboundEvent; told: { what: string; reason: string }[] } | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly runOf: SessionInput['run'],
    /** A gate's prompt was posted: the gates' owner keeps where (later edits reach every copy). */
    private readonly posted: (gateId: string, ref: NonNullable<Gate['posts']>[number]) => void,
  ) {}

  push(event: OutboundEvent): void {
    this.events.push(event);
  }

  /** Nothing queued and nothing on its way: safe to continue as new or to end. */
  get drained(): boolean {
    return this.events.length === 0 && !this.delivering;
  }

  /**
   * Runs for the workflow's whole life, never awaited: cancelling the workflow (a mission ending a denied
   * run) rejects its wait, and that must end the loop, not fail the workflow task as an unhandled rejection.
   */
  async keepDelivering(): Promise<void> {
    for (;;) {
      try {
        await wf.condition(() => this.events.length > 0);
      } catch (error) {
        if (wf.isCancellation(error)) return;
        throw error;
      }
      const event = this.events.shift()!;
      this.delivering = true;
      try {
        if (this.runOf) {
          await this.reportToMission(this.runOf.missionWorkflowId, event);
          continue;
        }
        const result = await deliver({ sessionId: this.sessionId, event });
        if (event.type === 'gate' && result.ref) this.posted(event.gate.id, result.ref);
        if (this.undelivered.length) {
          this.telling = {
            event: { type: 'message', text: describeUndelivered(this.undelivered) },
            told: this.undelivered,
          };
          this.events.unshift(this.telling.event);
          this.undelivered = [];
        }
      } catch (error) {
        if (wf.isCancellation(error)) return;
        wf.log.warn('delivery failed', {
          sessionId: this.sessionId,
          type: event.type,
          error: failureMessage(error),
        });
        if (this.telling && event === this.telling.event) {
          this.undelivered = [...this.telling.told, ...this.undelivered].slice(-MAX_UNDELIVERED);
        } else {
          const what = lostInDelivery(event);
          if (what && !this.runOf)
            this.undelivered = [...this.undelivered, { what, reason: failureMessage(error) }].slice(
              -MAX_UNDELIVERED,
            );
        }
      } finally {
        this.delivering = false;
      }
    }
  }

  /** A mission run's gates and refused clicks go to its mission, which shows them in the owner's conversation. */
  private async reportToMission(missionWorkflowId: string, event: OutboundEvent): Promise<void> {
    const mission = wf.getExternalWorkflowHandle(missionWorkflowId);
    if (event.type === 'gate' || event.type === 'gate_resolved')
      await mission.signal(runGateSignal, {
        runWorkflowId: this.sessionId,
        gate: event.gate,
        resolved: event.type === 'gate_resolved',
        ...(event.type === 'gate_resolved' ? { outcome: event.outcome } : {}),
        ...(event.type === 'gate' && event.reason === 'reminder' ? { reminder: true } : {}),
      });
    else if (event.type === 'notice' && event.to)
      await mission.signal(runNoticeSignal, {
        runWorkflowId: this.sessionId,
        text: event.text,
        to: event.to,
      });
  }
}

/** What a person missed when an event never reached their platform (edits and reactions are not missed). */
function lostInDelivery(event: OutboundEvent): string | undefined {
  if (event.type === 'message') return event.text.slice(0, 3_000);
  if (event.type === 'gate' && event.reason !== 'reminder')
    return `(the ${event.gate.toolName} prompt: say "pending" to see the open prompts again)`;
  return undefined;
}

function describeUndelivered(lost: { what: string; reason: string }[]): string {
  return [
    `⚠️ ${lost.length === 1 ? 'This' : `These ${lost.length} messages`} could not be posted here earlier (${lost.at(-1)!.reason}):`,
    ...lost.map((entry) => entry.what),
  ].join('\n\n');
}

/**
 * Approve (Continue, for a budget) and Deny (Stop), with the reason told to the agent: the one pair of controls of
 * every approval the page shows, in a conversation, on a budget card and in "Needs you". Their words come from
 * common/gates/words.ts, as Slack's and Discord's buttons do.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { choiceLabels } from '../../../common/gates/words';

export interface DecisionIds {
  approve: string;
  deny: string;
  /** The reason's field; none on a budget card (stopping needs no reason). */
  reason?: string;
}

export function DecisionButtons(props: {
  budget: boolean;
  ids: DecisionIds;
  /** False where this person may only deny (four-eyes: the requester). */
  mayApprove?: boolean;
  onDecide: (choice: 'approve' | 'deny', reason: string | undefined) => void;
  /** More controls on the same row (hand over, …). */
  children?: ComponentChildren;
}) {
  const [reason, setReason] = useState('');
  const labels = choiceLabels(props.budget);
  return (
    <div class="actions">
      {props.mayApprove !== false && (
        <button
          type="button"
          class="approve"
          data-testid={props.ids.approve}
          onClick={() => props.onDecide('approve', undefined)}
        >
          {labels.approve}
        </button>
      )}
      {props.ids.reason && (
        <input
          aria-label="Reason for denying (optional, told to the agent)"
          placeholder="Reason (optional, told to the agent)"
          value={reason}
          data-testid={props.ids.reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      )}
      <button
        type="button"
        class="deny"
        data-testid={props.ids.deny}
        onClick={() => props.onDecide('deny', reason.trim() || undefined)}
      >
        {labels.deny}
      </button>
      {props.children}
    </div>
  );
}

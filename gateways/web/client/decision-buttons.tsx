/**
 * Approve (Continue, for a budget) and Deny (Stop), with the reason told to the agent: the one pair of controls of
 * every approval the page shows, in a conversation, on a budget card and in "Needs you". Their words come from
 * common/gates/words.ts, as Slack's and Discord's buttons do.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** After a click the pair rests this long: a double-click is one decision, not a decision and an "already". */
const RESTS_AFTER_CLICK_MS = 3_000;
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
  // The ref stops a second click before the page has redrawn; the state shows the buttons resting.
  const resting = useRef<ReturnType<typeof setTimeout> | null>(null);
  const [sent, setSent] = useState(false);
  useEffect(() => () => clearTimeout(resting.current ?? undefined), []);
  const decide = (choice: 'approve' | 'deny', why: string | undefined) => {
    if (resting.current) return;
    resting.current = setTimeout(() => {
      resting.current = null;
      setSent(false);
    }, RESTS_AFTER_CLICK_MS);
    setSent(true);
    props.onDecide(choice, why);
  };
  return (
    <div class="actions">
      {props.mayApprove !== false && (
        <button
          type="button"
          class="approve"
          data-testid={props.ids.approve}
          disabled={sent}
          onClick={() => decide('approve', undefined)}
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
        disabled={sent}
        onClick={() => decide('deny', reason.trim() || undefined)}
      >
        {labels.deny}
      </button>
      {props.children}
    </div>
  );
}

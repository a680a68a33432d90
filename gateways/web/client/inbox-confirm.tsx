/** The one confirmation a batch of decisions from "Needs you" asks for: what will be decided, and a reason to deny. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { InboxItem } from './types';

export interface Batch {
  choice: 'approve' | 'deny';
  items: InboxItem[];
}

const keyOf = (item: InboxItem) => `${item.workflowId}#${item.gateId}`;

export function ConfirmBatch({
  confirming,
  close,
  confirm,
}: {
  confirming: Batch | null;
  close: () => void;
  confirm: (batch: Batch, reason: string | undefined) => Promise<void>;
}) {
  const [reason, setReason] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (confirming) dialog.current?.showModal?.();
    else dialog.current?.close?.();
  }, [confirming]);
  return (
    <dialog ref={dialog} data-testid="inbox-confirm" aria-labelledby="confirm-title" onClose={close}>
      {confirming && (
        <form
          method="dialog"
          onSubmit={async (e) => {
            e.preventDefault();
            await confirm(confirming, reason.trim() || undefined);
            setReason('');
          }}
        >
          <h3 id="confirm-title">
            {confirming.choice === 'approve' ? 'Approve' : 'Deny'} {confirming.items.length} decision
            {confirming.items.length === 1 ? '' : 's'}?
          </h3>
          <ul>
            {confirming.items.map((item) => (
              <li key={keyOf(item)}>
                {item.asks} <span class="meta">({item.where})</span>
              </li>
            ))}
          </ul>
          {confirming.choice === 'deny' && (
            <label>
              Reason, told to the agent (optional){' '}
              <input
                value={reason}
                data-testid="inbox-batch-reason"
                onInput={(e) => setReason(e.currentTarget.value)}
              />
            </label>
          )}
          <div class="actions">
            <button
              type="submit"
              class={confirming.choice === 'approve' ? 'approve' : 'deny'}
              data-testid="inbox-confirm-yes"
            >
              {confirming.choice === 'approve' ? 'Approve all' : 'Deny all'}
            </button>
            <button type="button" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}

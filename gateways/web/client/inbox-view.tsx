/**
 * "Needs you": every open decision this person may make, from web, Slack, Discord and Teams conversations and mission runs.
 * Decide one (approve; deny with a reason; edit & approve; hand over; answer a question) or several at once after
 * one confirmation; sign-ins open their conversation. The rule under each is the workflow's own.
 */
import { useState } from 'preact/hooks';
import { ConfirmBatch, type Batch } from './inbox-confirm';
import { api, messageOf, post } from './api';
import { waited } from './format';
import { DecisionButtons } from './decision-buttons';
import { EditAndApprove, QuestionForm } from './gates';
import type { Answer, InboxItem, InboxList, InboxOutcome } from './types';

const KIND_WORDS: Record<InboxItem['kind'], string> = {
  approval: 'Approval',
  question: 'Question',
  credential: 'Sign-in',
  budget: 'Budget',
};
const CHANNEL_WORDS: Record<InboxItem['channel'], string> = {
  web: 'Web',
  slack: 'Slack',
  discord: 'Discord',
  teams: 'Teams',
  mission: 'Mission',
};
type Choice = 'approve' | 'deny' | 'delegate' | 'edit';
type Extra = { reason?: string; to?: string; args?: Record<string, unknown> };
const key = (item: { workflowId: string; gateId: string }) => `${item.workflowId}#${item.gateId}`;
/** Questions and sign-ins are answered where their form is; approvals and budgets can be decided here. */
const decidable = (item: InboxItem) => item.kind === 'approval' || item.kind === 'budget';

/** Where it was asked, as a link: a web conversation opens; another channel's is read here. */
function Where({ item }: { item: InboxItem }) {
  return (
    <a
      href={item.sessionId ? `#${item.sessionId}` : `#/c/${encodeURIComponent(item.workflowId)}`}
      data-testid="inbox-open"
    >
      {item.where}
    </a>
  );
}

function Item({
  item,
  selected,
  toggle,
  decide,
  answer,
  problem,
}: {
  item: InboxItem;
  selected: boolean;
  toggle: () => void;
  decide: (items: InboxItem[], choice: Choice, extra?: Extra) => Promise<void>;
  answer: (item: InboxItem, answers: Answer[]) => Promise<void>;
  problem: (text: string) => void;
}) {
  const [to, setTo] = useState('');
  const id = `inbox-${item.gateId}`;
  return (
    <li
      class="inbox-item"
      data-testid="inbox-item"
      data-kind={item.kind}
      data-channel={item.channel}
      aria-labelledby={`${id}-asks`}
    >
      <div class="inbox-line">
        {decidable(item) && (
          <input
            type="checkbox"
            checked={selected}
            onChange={toggle}
            aria-label={`Select: ${item.asks}`}
            data-testid="inbox-select"
          />
        )}
        <span class={`chip kind-${item.kind}`}>{KIND_WORDS[item.kind]}</span>
        <span class="chip">{CHANNEL_WORDS[item.channel]}</span>
        <span id={`${id}-asks`} class="asks" data-testid="inbox-asks">
          {item.asks}
        </span>
      </div>
      <div class="meta">
        <Where item={item} /> · asked by @{item.requesterId} · waiting {waited(item.createdAt)}
        {item.expiresAt ? ` · expires ${new Date(item.expiresAt).toLocaleString()}` : ''}
      </div>
      <div class="meta rule" data-testid="inbox-rule">
        {item.rule}
      </div>
      {decidable(item) ? (
        <DecisionButtons
          budget={item.kind === 'budget'}
          ids={{ approve: 'inbox-approve', deny: 'inbox-deny', reason: 'inbox-reason' }}
          mayApprove={item.mayApprove}
          onDecide={(choice, reason) => decide([item], choice, reason ? { reason } : {})}
        >
          {item.kind === 'approval' && (
            <>
              <input
                aria-label="Hand this to (their id)"
                placeholder="Hand to… (e.g. carol)"
                value={to}
                data-testid="inbox-delegate-to"
                onInput={(e) => setTo(e.currentTarget.value)}
              />
              <button
                type="button"
                data-testid="inbox-delegate"
                disabled={!to.trim()}
                onClick={() => decide([item], 'delegate', { to: to.trim() })}
              >
                Hand over
              </button>
            </>
          )}
        </DecisionButtons>
      ) : item.kind === 'question' && item.questions ? (
        <QuestionForm
          formId={id}
          questions={item.questions}
          submit={(answers) => void answer(item, answers)}
        />
      ) : (
        <div class="meta">
          {item.sessionId
            ? 'Connect it in its conversation (the link above).'
            : `Connect it in ${CHANNEL_WORDS[item.channel]}.`}
        </div>
      )}
      {item.mayEdit && (
        <EditAndApprove
          args={item.args ?? {}}
          problem={problem}
          submit={(args) => decide([item], 'edit', { args })}
        />
      )}
    </li>
  );
}

export function InboxView({ inbox, reload }: { inbox: InboxList | null; reload: () => Promise<void> }) {
  const [order, setOrder] = useState<'newest' | 'oldest'>('newest');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirming, setConfirming] = useState<Batch | null>(null);
  const [report, setReport] = useState<string | null>(null);

  const { pages, next, loadMore, forget } = useMorePages(inbox);
  const firstPage = new Set((inbox?.items ?? []).map(key));
  const items = [...(inbox?.items ?? []), ...pages.filter((item) => !firstPage.has(key(item)))].sort(
    (a, b) => (order === 'newest' ? b.createdAt - a.createdAt : a.createdAt - b.createdAt),
  );
  const chosen = items.filter((i) => selected.has(key(i)));

  const { decide, answer } = useInboxActions(
    async () => {
      forget();
      await reload();
    },
    setReport,
    () => setSelected(new Set()),
  );

  return (
    <section class="inbox" data-testid="inbox" aria-labelledby="inbox-title">
      <InboxHeader order={order} setOrder={setOrder} />
      <div class="inbox-body">
        {report && (
          <div class="notice" role="status" data-testid="inbox-report">
            {report}
          </div>
        )}
        {inbox === null ? (
          <p>Loading…</p>
        ) : items.length === 0 ? (
          <p data-testid="inbox-empty">
            Nothing is waiting for you. Decisions from every channel appear here.
          </p>
        ) : (
          <>
            <BatchActions
              items={items}
              chosen={chosen}
              setSelected={setSelected}
              setConfirming={setConfirming}
            />
            <ul class="inbox-list" data-testid="inbox-list">
              {items.map((item) => (
                <Item
                  key={key(item)}
                  item={item}
                  selected={selected.has(key(item))}
                  toggle={() => {
                    const next = new Set(selected);
                    if (next.has(key(item))) next.delete(key(item));
                    else next.add(key(item));
                    setSelected(next);
                  }}
                  decide={decide}
                  answer={answer}
                  problem={setReport}
                />
              ))}
            </ul>
            <PageFooter inbox={inbox} shown={items.length} next={next} loadMore={loadMore} />
            {inbox.unreadable > 0 && (
              <p class="meta">
                {inbox.unreadable} more waiting conversation{inbox.unreadable === 1 ? '' : 's'} could not be
                read yet (they move to this version within moments of a deploy).
              </p>
            )}
          </>
        )}
      </div>
      <ConfirmBatch
        confirming={confirming}
        close={() => setConfirming(null)}
        confirm={async ({ choice, items: targets }, reason) => {
          setConfirming(null);
          await decide(targets, choice, { reason });
        }}
      />
    </section>
  );
}

/** Deciding and answering from the inbox: what went through and what was refused, said in one report. */
function useInboxActions(
  reload: () => Promise<void>,
  setReport: (report: string | null) => void,
  clearSelection: () => void,
) {
  const decide = async (targets: InboxItem[], choice: Choice, extra: Extra = {}) => {
    try {
      const { outcomes } = await post<{ outcomes: InboxOutcome[] }>('/inbox/decisions', {
        items: targets.map(({ workflowId, gateId }) => ({ workflowId, gateId })),
        choice,
        ...(extra.reason ? { reason: extra.reason } : {}),
        ...(extra.to ? { to: extra.to } : {}),
        ...(extra.args ? { args: extra.args } : {}),
      });
      const done = outcomes.filter((o) => o.ok).length;
      const refused = outcomes.filter((o): o is Extract<InboxOutcome, { ok: false }> => !o.ok);
      const verb = {
        approve: 'approved',
        deny: 'denied',
        delegate: `handed to @${extra.to}`,
        edit: 'approved as edited',
      }[choice];
      setReport(
        `${done} ${verb}.${refused.length ? ` Not decided: ${refused.map((o) => o.error).join('; ')}.` : ''}`,
      );
      clearSelection();
    } catch (error) {
      setReport(`Nothing was decided: ${messageOf(error)}`);
    }
    await reload();
  };

  const answer = async (item: InboxItem, answers: Answer[]) => {
    try {
      const { outcome } = await post<{ outcome: InboxOutcome }>('/inbox/answers', {
        workflowId: item.workflowId,
        gateId: item.gateId,
        answers,
      });
      setReport(outcome.ok ? 'Answer sent.' : `Not answered: ${outcome.error}.`);
    } catch (error) {
      setReport(`Not answered: ${messageOf(error)}`);
    }
    await reload();
  };
  return { decide, answer };
}

function InboxHeader({
  order,
  setOrder,
}: {
  order: 'newest' | 'oldest';
  setOrder: (order: 'newest' | 'oldest') => void;
}) {
  return (
    <header class="conversation-header">
      <h2 id="inbox-title" class="title">
        Needs you
      </h2>
      <label class="inline">
        Order{' '}
        <select
          value={order}
          data-testid="inbox-order"
          onChange={(e) => setOrder(e.currentTarget.value === 'oldest' ? 'oldest' : 'newest')}
        >
          <option value="newest">newest first</option>
          <option value="oldest">oldest first</option>
        </select>
      </label>
      {typeof Notification !== 'undefined' && Notification.permission === 'default' && (
        <button type="button" class="link" onClick={() => void Notification.requestPermission()}>
          Notify me when something waits
        </button>
      )}
    </header>
  );
}

/** Select all, and approve or deny the selection (each after a confirmation). */
function BatchActions({
  items,
  chosen,
  setSelected,
  setConfirming,
}: {
  items: InboxItem[];
  chosen: InboxItem[];
  setSelected: (selected: Set<string>) => void;
  setConfirming: (batch: Batch) => void;
}) {
  return (
    <div class="actions batch">
      <label class="inline">
        <input
          type="checkbox"
          data-testid="inbox-select-all"
          checked={chosen.length > 0 && chosen.length === items.filter(decidable).length}
          onChange={(e) =>
            setSelected(e.currentTarget.checked ? new Set(items.filter(decidable).map(key)) : new Set())
          }
        />{' '}
        Select all
      </label>
      <button
        type="button"
        class="approve"
        disabled={!chosen.some((i) => i.mayApprove)}
        data-testid="inbox-approve-selected"
        onClick={() => setConfirming({ choice: 'approve', items: chosen.filter((i) => i.mayApprove) })}
      >
        Approve selected ({chosen.filter((i) => i.mayApprove).length})
      </button>
      <button
        type="button"
        class="deny"
        disabled={!chosen.length}
        data-testid="inbox-deny-selected"
        onClick={() => setConfirming({ choice: 'deny', items: chosen })}
      >
        Deny selected ({chosen.length})
      </button>
    </div>
  );
}

/** Pages after the first (the first is pushed): loaded on demand, forgotten when the list is read again. */
function useMorePages(inbox: InboxList | null) {
  const [more, setMore] = useState<{ items: InboxItem[]; next?: string } | null>(null);
  const next = more ? more.next : inbox?.next;
  const loadMore = async () => {
    if (!next) return;
    const page = await api<InboxList>(`/inbox?cursor=${encodeURIComponent(next)}`);
    setMore({ items: [...(more?.items ?? []), ...page.items], ...(page.next ? { next: page.next } : {}) });
  };
  return { pages: more?.items ?? [], next, loadMore, forget: () => setMore(null) };
}

/** Says when the list is cut (more pages, or gates only their conversation shows), with the way to the rest. */
function PageFooter(props: {
  inbox: InboxList;
  shown: number;
  next?: string;
  loadMore: () => Promise<void>;
}) {
  const { inbox, next } = props;
  return (
    <>
      {next && (
        <p class="meta" data-testid="inbox-more">
          {props.shown} shown; {inbox.total} conversation{inbox.total === 1 ? '' : 's'} wait on you in all.{' '}
          <button type="button" class="link" onClick={() => void props.loadMore()}>
            Show more
          </button>
        </p>
      )}
      {inbox.notShown > 0 && (
        <p class="meta" data-testid="inbox-not-shown">
          {inbox.notShown} more decision{inbox.notShown === 1 ? ' is' : 's are'} open in conversations that
          wait on many at once: open them to decide.
        </p>
      )}
    </>
  );
}

/** One conversation: its header (status, spend, Stop, Temporal link), its transcript, notices and the composer. */
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, messageOf, post } from './api';
import { spendText, time } from './format';
import { GateActionsContext, type GateActions } from './gates';
import { useLiveSession, visiblePartial } from './live-session';
import { Transcript } from './transcript';
import type { SessionSummary, WebView } from './types';
import { ForkContext, Lineage, useForkActions, useForks } from './forks';

export function Conversation({
  sessionId,
  summary,
  onView,
  onArchive,
  empty,
  models = [],
}: {
  sessionId: string;
  /** The deployment's models, for Retry. */
  models?: readonly string[];
  /** The person's own conversation in their list (undefined: not theirs, or not listed yet). */
  summary: SessionSummary | undefined;
  /** Every view that arrives (the sidebar's grants and list follow it). */
  onView: (view: WebView) => void;
  onArchive: (sessionId: string, archived: boolean) => Promise<void>;
  /** What a conversation nobody has written in yet shows (the welcome, with its examples). */
  empty?: ComponentChildren;
}) {
  const live = useLiveSession(sessionId, onView);
  const [problem, setProblem] = useState<string | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const view = live.view;
  const actions = useGateActions(`session:web:${sessionId}`, setProblem);
  const [forkGeneration, setForkGeneration] = useState(0);
  const forks = useForks(sessionId, forkGeneration, view !== null);
  const forkActions = useForkActions(sessionId, models, setProblem, () => setForkGeneration((n) => n + 1));

  useEffect(() => setProblem(null), [sessionId]);
  // Keep the newest in sight while the person is at the bottom.
  const atBottom = useRef(true);
  useEffect(() => {
    const el = scroller.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  });

  const title = summary?.title ?? view?.transcript.find((m) => m.role === 'user')?.text.slice(0, 80);
  return (
    <GateActionsContext.Provider value={actions}>
      <ForkContext.Provider value={view ? forkActions : null}>
        <ConversationHeader
          sessionId={sessionId}
          title={title ?? (live.absent ? 'New conversation' : `Conversation ${sessionId.slice(0, 8)}`)}
          view={view}
          summary={summary}
          onArchive={onArchive}
          setProblem={setProblem}
        />
        <Lineage view={view} forks={forks} />
        {live.info && (
          <div id="banner" class="banner" data-testid="banner" role="status">
            {live.info}
          </div>
        )}
        <div
          id="transcript"
          data-testid="transcript"
          ref={scroller}
          onScroll={(e) => {
            const el = e.currentTarget;
            atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          }}
        >
          {view ? (
            <Transcript view={view} partial={visiblePartial(view, live.partial)} />
          ) : (
            live.absent && empty
          )}
        </div>
        <Notices view={view} problem={problem} clearProblem={() => setProblem(null)} />
      </ForkContext.Provider>
    </GateActionsContext.Provider>
  );
}

/** How this page decides and answers a gate: a signal through the gateway; a refusal shows as the problem. */
function useGateActions(workflowId: string, setProblem: (problem: string | null) => void): GateActions {
  return useMemo<GateActions>(
    () => ({
      decide: async (gate, choice, extra = {}) => {
        // A mission run's gate shown here is decided here too: the conversation forwards it to the run.
        try {
          await post('/decisions', { workflowId, gateId: gate.id, choice, ...extra });
          setProblem(null);
        } catch (error) {
          setProblem(messageOf(error));
        }
      },
      answer: async (gate, answers) => {
        try {
          await post('/answers', { workflowId, gateId: gate.id, answers });
          setProblem(null);
        } catch (error) {
          setProblem(messageOf(error));
        }
      },
      problem: setProblem,
    }),
    [workflowId],
  );
}

/** The title, status and spend, Stop while a turn runs, Archive for the owner, and the Temporal UI link. */
function ConversationHeader({
  sessionId,
  title,
  view,
  summary,
  onArchive,
  setProblem,
}: {
  sessionId: string;
  title: string;
  view: WebView | null;
  summary: SessionSummary | undefined;
  onArchive: (sessionId: string, archived: boolean) => Promise<void>;
  setProblem: (problem: string | null) => void;
}) {
  const [stopping, setStopping] = useState(false);
  const stop = async () => {
    setStopping(true);
    try {
      await api(`/sessions/${sessionId}/stop`, { method: 'POST', body: '{}' });
    } catch (error) {
      setProblem(`Stop was not sent: ${messageOf(error)}`);
    } finally {
      setStopping(false);
    }
  };
  return (
    <header class="conversation-header">
      <h2 id="title" class="title">
        {title}
      </h2>
      {view && (
        <span class={`status ${view.status}`} data-testid="status" data-status={view.status}>
          {view.status.replace('_', ' ')}
        </span>
      )}
      <span
        class="usage"
        data-testid="usage"
        title={[
          "What this conversation's model calls used",
          ...Object.entries(view?.usageByModel ?? {}).map(
            ([model, spend]) =>
              `${model}: ${spendText(spend)} in ${spend.calls} call${spend.calls === 1 ? '' : 's'}`,
          ),
        ].join('\n')}
      >
        {view?.usage?.calls ? spendText(view.usage) : ''}
      </span>
      {/* Stop shows while a turn runs or waits on a gate; the workflow decides whether this person may stop it. */}
      {view && view.status !== 'idle' && (
        <button
          id="stop"
          type="button"
          data-testid="stop"
          title="Stop the running turn (or type: stop)"
          disabled={stopping}
          onClick={stop}
        >
          ■ Stop
        </button>
      )}
      {/* A provider asked to wait (retry-after): the other models can be asked now instead. */}
      {view?.modelWait && (
        <button
          type="button"
          data-testid="try-model-now"
          title={`The model's provider asked to wait until ${time(view.modelWait.until)}`}
          onClick={() =>
            void api(`/sessions/${sessionId}/try-model-now`, { method: 'POST', body: '{}' }).catch(
              (error: unknown) => setProblem(`Not sent: ${messageOf(error)}`),
            )
          }
        >
          Try the fallback now
        </button>
      )}
      {summary && (
        <button
          type="button"
          class="link"
          data-testid="archive"
          title={summary.archived ? 'Back to your conversations' : 'Move to Archived (it still answers)'}
          onClick={() =>
            void onArchive(sessionId, !summary.archived).catch((error: unknown) =>
              setProblem(`Not ${summary.archived ? 'brought back' : 'archived'}: ${messageOf(error)}`),
            )
          }
        >
          {summary.archived ? 'Unarchive' : 'Archive'}
        </button>
      )}
      {view?.temporalUrl && (
        <a
          id="temporal-link"
          data-testid="temporal-link"
          href={view.temporalUrl}
          target="_blank"
          rel="noopener"
        >
          <span class="wide-only">Open in </span>Temporal UI ↗
        </a>
      )}
    </header>
  );
}

/** The latest three notices (dismissable), without those a gate on the page already says, and this page's problem. */
function Notices({
  view,
  problem,
  clearProblem,
}: {
  view: WebView | null;
  problem: string | null;
  clearProblem: () => void;
}) {
  const [dismissed, setDismissed] = useState<Set<string>>(new Set());
  const shownGates = new Set(view?.gates.map((g) => g.id));
  const notices = (view?.notices ?? [])
    .filter((n) => !dismissed.has(n.id) && !(n.gateId && shownGates.has(n.gateId)))
    .slice(-3);
  return (
    <div class="notices" data-testid="notices" aria-live="polite">
      {notices.map((n) => (
        <div class="notice" data-testid="notice" key={n.id}>
          <span>{`${time(n.at)} · ${n.text}`}</span>
          <button
            type="button"
            class="link"
            aria-label="Dismiss"
            onClick={() => setDismissed(new Set([...dismissed, n.id]))}
          >
            ×
          </button>
        </div>
      ))}
      {problem && (
        <div class="notice problem" role="alert" data-testid="problem">
          <span>{problem}</span>
          <button type="button" class="link" aria-label="Dismiss" onClick={clearProblem}>
            ×
          </button>
        </div>
      )}
    </div>
  );
}

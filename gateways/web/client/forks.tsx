/**
 * Fork and retry on the page: "Fork from here" on every message, "Retry" (with a model of the deployment) on every
 * answer; the lineage on both sides (a fork says where it came from, the original lists its forks); and a retry's
 * two answers side by side. The server makes the fork (gateways/forks.ts); the page only asks and opens it.
 */
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { api, messageOf, post } from './api';
import { Markdown } from './markdown';
import { time } from './format';
import type { Message, WebView } from './types';

export interface ForkActions {
  /** The deployment's models (`provider:model`), the first the default. */
  models: readonly string[];
  fork: (messageId: string, mode: 'through' | 'retry', model?: string) => Promise<void>;
}

export const ForkContext = createContext<ForkActions | null>(null);

export interface ForkSummary {
  sessionId: string;
  by?: string;
  messageId?: string;
  mode?: string;
  model?: string;
  startTime: string;
}

/** Forking from this page: the new conversation opens once it exists; a refusal shows as the page's problem. */
export function useForkActions(
  sessionId: string,
  models: readonly string[],
  setProblem: (problem: string | null) => void,
  forked: () => void,
): ForkActions {
  return {
    models,
    fork: async (messageId, mode, model) => {
      try {
        const made = await post<{ sessionId: string }>(`/sessions/${sessionId}/fork`, {
          messageId,
          mode,
          ...(model ? { model } : {}),
        });
        forked();
        location.hash = made.sessionId;
      } catch (error) {
        setProblem(`Not forked: ${messageOf(error)}`);
      }
    },
  };
}

/**
 * This conversation's forks (read once it exists, and again after one is made here): a conversation not started yet
 * has none, and asking would only be a 404 in the console.
 */
export function useForks(sessionId: string, generation: number, exists: boolean): ForkSummary[] {
  const [forks, setForks] = useState<ForkSummary[]>([]);
  useEffect(() => {
    if (!exists) return;
    let live = true;
    api<{ forks: ForkSummary[] }>(`/sessions/${sessionId}/forks`).then(
      (body) => live && setForks(body.forks),
      () => live && setForks([]),
    );
    return () => {
      live = false;
    };
  }, [sessionId, generation, exists]);
  return forks;
}

/** A message's own actions: fork from it; on an answer, retry it (with another model, where there are several). */
export function MessageActions({ message }: { message: Message }) {
  const actions = useContext(ForkContext);
  const [model, setModel] = useState('');
  const [busy, setBusy] = useState(false);
  if (!actions || message.role === 'tool') return null;
  const answer = message.role === 'assistant' && !message.synthetic;
  const run = (mode: 'through' | 'retry') => {
    setBusy(true);
    void actions
      .fork(message.id, mode, mode === 'retry' && model ? model : undefined)
      .finally(() => setBusy(false));
  };
  return (
    <span class="message-actions">
      <button
        type="button"
        class="link"
        data-testid="fork"
        title="A new conversation with everything up to here (nothing runs again)"
        disabled={busy}
        onClick={() => run('through')}
      >
        Fork
      </button>
      {answer && (
        <>
          {actions.models.length > 1 && (
            <select
              data-testid="retry-model"
              aria-label="Model for the retry"
              value={model}
              onChange={(e) => setModel(e.currentTarget.value)}
            >
              <option value="">{message.model ?? actions.models[0]}</option>
              {actions.models
                .filter((m) => m !== (message.model ?? actions.models[0]))
                .map((m) => (
                  <option value={m} key={m}>
                    {m}
                  </option>
                ))}
            </select>
          )}
          <button
            type="button"
            class="link"
            data-testid="retry"
            title="A new conversation that writes this answer again (the original stays as it is)"
            disabled={busy}
            onClick={() => run('retry')}
          >
            Retry
          </button>
        </>
      )}
    </span>
  );
}

/** Where this conversation came from (a fork), and where it went (its forks). */
export function Lineage({ view, forks }: { view: WebView | null; forks: ForkSummary[] }) {
  const origin = view?.forkedFrom;
  if (!origin && !forks.length) return null;
  const originalId = origin?.workflowId.replace(/^session:web:/, '');
  return (
    <div class="lineage" data-testid="lineage">
      {origin && (
        <div data-testid="forked-from">
          {`${origin.mode === 'retry' ? 'Retry' : 'Fork'} of `}
          <a href={`#${originalId}`}>{originalId?.slice(0, 8) ?? origin.workflowId}</a>
          {` by @${origin.by}${origin.model ? ` with ${origin.model}` : ''} · ${time(origin.at)}`}
        </div>
      )}
      {forks.length > 0 && (
        <details data-testid="forks">
          <summary>{`${forks.length} fork${forks.length === 1 ? '' : 's'}`}</summary>
          <ul>
            {forks.map((f) => (
              <li key={f.sessionId}>
                <a href={`#${f.sessionId}`}>{f.sessionId.slice(0, 8)}</a>
                {` by @${f.by ?? '?'}${f.mode === 'retry' ? ' (retry)' : ''}${f.model ? ` with ${f.model}` : ''}`}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

/** A retry's answer next to the one it writes again. */
export function SideBySide({ view }: { view: WebView }) {
  const origin = view.forkedFrom;
  if (origin?.mode !== 'retry' || !origin.original) return null;
  const again = view.transcript.find(
    (m): m is Extract<Message, { role: 'assistant' }> =>
      m.role === 'assistant' && !m.synthetic && m.at >= origin.at && !!m.text,
  );
  return (
    <section class="side-by-side" data-testid="side-by-side">
      <div class="column" data-testid="original-answer">
        <div class="meta">{`original${origin.original.model ? ` · ${origin.original.model}` : ''}`}</div>
        <Markdown text={origin.original.text} />
      </div>
      <div class="column" data-testid="retried-answer">
        <div class="meta">{`retry${again?.model ? ` · ${again.model}` : origin.model ? ` · ${origin.model}` : ''}`}</div>
        {again ? <Markdown text={again.text} /> : <p class="meta">writing…</p>}
      </div>
    </section>
  );
}

/**
 * One conversation, live: its view as the web API sends it (GET first, then the server-sent events of its stream),
 * the answer being written, and what the stream says when the agent or the conversation is not there.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';
import type { StreamedAnswer, WebView } from './types';

export interface LiveSession {
  view: WebView | null;
  partial: StreamedAnswer | null;
  /** Why there is no view, or why it may be old, in the person's words; null when all is well. */
  info: string | null;
  /** Not started yet (or not this person's: it looks the same). */
  absent: boolean;
}

/**
 * Conversations this page just made and nobody has written in yet: there is nothing to read, so the page does not
 * ask (the answer would only be a 404 in the browser's console).
 */
export const notStartedYet = new Set<string>();

export function useLiveSession(sessionId: string, onView: (view: WebView) => void): LiveSession {
  const [live, setLive] = useState<LiveSession>({ view: null, partial: null, info: null, absent: false });
  useEffect(() => {
    let closed = false;
    setLive({ view: null, partial: null, info: null, absent: false });
    const show = (view: WebView) => {
      if (closed) return;
      setLive((l) => ({ ...l, view, info: null, absent: false }));
      onView(view);
    };
    // The first view by a plain request: shown even where the stream cannot connect (a proxy that buffers it).
    const first = notStartedYet.has(sessionId)
      ? Promise.reject(new ApiError('not started yet', 404))
      : api<WebView>(`/sessions/${sessionId}`);
    first.then(show, (error: unknown) => {
      if (closed) return;
      if (error instanceof ApiError && error.status === 404)
        setLive((l) =>
          l.view ? l : { ...l, absent: true, info: 'Say something to start this conversation.' },
        );
      else setLive((l) => (l.view ? l : { ...l, info: (error as Error).message }));
    });
    const stream = new EventSource(`/api/sessions/${sessionId}/stream`);
    stream.addEventListener('state', (event) =>
      show(JSON.parse((event as MessageEvent<string>).data) as WebView),
    );
    stream.addEventListener('partial', (event) => {
      const update = JSON.parse((event as MessageEvent<string>).data) as Omit<StreamedAnswer, 'base'>;
      setLive((l) => {
        const base =
          l.partial?.streamId === update.streamId ? l.partial.base : (l.view?.transcript.length ?? 0);
        return { ...l, partial: { ...update, base } };
      });
    });
    stream.addEventListener('unavailable', (event) =>
      setLive((l) => ({
        ...l,
        info: (JSON.parse((event as MessageEvent<string>).data) as { message: string }).message,
      })),
    );
    stream.addEventListener('not-found', () =>
      setLive((l) => ({
        ...l,
        absent: !l.view,
        info: l.view ? l.info : 'Say something to start this conversation.',
      })),
    );
    return () => {
      closed = true;
      stream.close();
    };
  }, [sessionId]);
  return live;
}

/**
 * The streamed text to show below the transcript, if any: it goes once the final message is in the view (the
 * stream said it is done, or the answer with this text arrived, or the turn ended); a failed call's is empty.
 */
export function visiblePartial(view: WebView, partial: StreamedAnswer | null): string | undefined {
  if (!partial || !partial.text || view.status === 'idle') return undefined;
  const grown = view.transcript.length > partial.base;
  const last = view.transcript.at(-1);
  const arrived = last?.role === 'assistant' && last.text === partial.text;
  if (grown && (partial.done || arrived)) return undefined;
  return partial.text;
}

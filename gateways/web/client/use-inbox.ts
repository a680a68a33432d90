/**
 * "Needs you", kept current while the page is open: pushed by the gateway (`/api/inbox/stream`, a new list whenever
 * it changes), read once more after each decision made here, its count in the tab's title, and a browser
 * notification (when allowed) when more wait while the tab is hidden. While the stream is down (the browser
 * reconnects it by itself), the list is read now and then instead.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api';
import type { InboxList } from './types';

/**
 * How many decisions wait: exact when the list holds them all; with more pages, the exact number of conversations
 * waiting (visibility counts conversations, and most hold one decision).
 */
export function waitingCount(inbox: InboxList): number {
  return inbox.next ? Math.max(inbox.total, inbox.items.length) : inbox.items.length + inbox.notShown;
}

/** Only while the pushed stream is down. */
const FALLBACK_POLL_MS = 15_000;

export function useInbox(signedIn: boolean): { inbox: InboxList | null; loadInbox: () => Promise<void> } {
  const [inbox, setInbox] = useState<InboxList | null>(null);
  const loadInbox = useCallback(() => api<InboxList>('/inbox').then(setInbox, () => {}), []);

  useEffect(() => {
    if (!signedIn) return;
    const stream = new EventSource('/api/inbox/stream');
    let live = false;
    stream.addEventListener('open', () => (live = true));
    stream.addEventListener('error', () => (live = false));
    stream.addEventListener('inbox', (event) => {
      live = true;
      setInbox(JSON.parse((event as MessageEvent<string>).data) as InboxList);
    });
    const timer = setInterval(() => !live && !document.hidden && void loadInbox(), FALLBACK_POLL_MS);
    return () => {
      clearInterval(timer);
      stream.close();
    };
  }, [signedIn]);

  const count = inbox ? waitingCount(inbox) : 0;
  const shownCount = useRef(0);
  useEffect(() => {
    document.title = count ? `(${count}) Agent · web chat` : 'Agent · web chat';
    const more = count > shownCount.current && document.hidden;
    if (more && typeof Notification !== 'undefined' && Notification.permission === 'granted')
      new Notification('The agent needs you', {
        body: `${count} decision${count === 1 ? '' : 's'} wait for you.`,
      });
    shownCount.current = count;
  }, [count]);

  return { inbox, loadInbox };
}

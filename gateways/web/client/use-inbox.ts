/**
 * "Needs you", kept current while the page is open: read every few seconds and when the tab comes back into view,
 * its count in the tab's title, and a browser notification (when allowed) when more wait while the tab is hidden.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api';
import type { InboxList } from './types';

const INBOX_POLL_MS = 5_000;

export function useInbox(signedIn: boolean): { inbox: InboxList | null; loadInbox: () => Promise<void> } {
  const [inbox, setInbox] = useState<InboxList | null>(null);
  const loadInbox = useCallback(() => api<InboxList>('/inbox').then(setInbox, () => {}), []);

  useEffect(() => {
    if (!signedIn) return;
    void loadInbox();
    const timer = setInterval(() => !document.hidden && void loadInbox(), INBOX_POLL_MS);
    const back = () => !document.hidden && void loadInbox();
    document.addEventListener('visibilitychange', back);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', back);
    };
  }, [signedIn]);

  const count = inbox?.items.length ?? 0;
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

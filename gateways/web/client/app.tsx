/**
 * The web chat: a thin view over the workflows. Every action is an HTTP call that becomes a signal; the page shows
 * what the workflows say. The address says what is open (`#<conversation>`, `#/inbox`), so deep links, the back
 * button and a link opened in an open tab all work.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, messageOf, post } from './api';
import { Composer } from './composer';
import { Conversation } from './conversation';
import { InboxView } from './inbox-view';
import { notStartedYet } from './live-session';
import { ReadOnlyConversation } from './read-only-conversation';
import { Sidebar } from './sidebar';
import { useInbox, waitingCount } from './use-inbox';
import type { Grant, Me, SessionSummary, WebView } from './types';
import { Welcome } from './welcome';

const routeOf = () => decodeURIComponent(location.hash.slice(1));

export function App() {
  const [route, setRoute] = useState(routeOf);
  const [me, setMe] = useState<Me | null>(null);
  const [signIn, setSignIn] = useState<string | null | undefined>(undefined);
  const [drawer, setDrawer] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const lastStatus = useRef<string | undefined>(undefined);
  /** `#/c/<workflow id>`: a conversation of another channel, read here. */
  const foreign = route.startsWith('/c/') ? route.slice(3) : null;
  const sessionId = route && route !== '/inbox' && !foreign ? route : null;

  useHashChange(() => {
    setRoute(routeOf());
    setDrawer(false);
  });

  const failed = useCallback((error: unknown) => {
    if (error instanceof ApiError && error.status === 401) {
      setMe(null);
      setSignIn(error.signIn ?? null);
      setProblem(
        error.signIn
          ? 'Sign in to chat with the agent.'
          : 'Not signed in: open the link printed when the agent started (it ends in ?token=…).',
      );
    } else setProblem(messageOf(error));
  }, []);

  const { sessions, loadSessions, archive, newConversation } = useConversations(failed);
  const { grants, loadGrants, revoke } = useGrants(sessionId, failed);
  const { inbox, loadInbox } = useInbox(me !== null);

  useEffect(() => {
    api<Me>('/me').then((who) => {
      setMe(who);
      setProblem(null);
      void loadSessions();
    }, failed);
  }, []);

  useEffect(() => void loadGrants(), [loadGrants]);

  const count = inbox ? waitingCount(inbox) : 0;

  /** A message: into the open conversation, or the first of a new one. */
  const send = async (text: string, messageId: string) => {
    if (!sessionId) return await newConversation(text, messageId);
    await post(`/sessions/${sessionId}/messages`, { text, messageId });
    notStartedYet.delete(sessionId);
    setTimeout(() => void loadSessions(), 800);
  };

  const onView = useCallback(
    (view: WebView) => {
      void loadGrants();
      if (lastStatus.current !== view.status) {
        lastStatus.current = view.status;
        void loadSessions();
        void loadInbox();
      }
    },
    [loadGrants, loadSessions, loadInbox],
  );

  return (
    <div class={`layout${drawer ? ' drawer-open' : ''}`}>
      <Sidebar
        me={me}
        signIn={signIn}
        sessions={sessions}
        current={route || null}
        inboxCount={count}
        grants={grants}
        open={drawer}
        onNavigate={() => setDrawer(false)}
        onNew={() => void newConversation().catch(failed)}
        onRevoke={(g) => void revoke(g)}
      />
      {drawer && <div class="scrim" onClick={() => setDrawer(false)} aria-hidden="true" />}
      <main>
        <TopBar drawer={drawer} toggle={() => setDrawer(!drawer)} count={count} />
        {problem && (
          <div class="banner" data-testid="banner" role="alert">
            {problem}
          </div>
        )}
        <Page
          route={route}
          foreign={foreign}
          sessionId={sessionId}
          inbox={inbox}
          loadInbox={loadInbox}
          sessions={sessions}
          onView={onView}
          onArchive={archive}
          start={(text) => void newConversation(text).catch(failed)}
          say={(text) => void send(text, crypto.randomUUID()).catch(failed)}
          demoModel={me?.demoModel === true}
          models={me?.models ?? []}
        />
        {/* One composer for every conversation: what is typed while another opens is kept, and sent where it shows. */}
        {route !== '/inbox' && !foreign && (
          <Composer
            send={send}
            placeholder={sessionId ? 'Message the agent… try "run `ls -la`"' : 'Message the agent…'}
          />
        )}
      </main>
    </div>
  );
}

/** Follows the address (`#…`): deep links, the back button and links opened in an open tab. */
function useHashChange(follow: () => void) {
  useEffect(() => {
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
}

/** The phone's bar: the drawer's button and "Needs you" with its count. */
function TopBar({ drawer, toggle, count }: { drawer: boolean; toggle: () => void; count: number }) {
  return (
    <div class="topbar">
      <button
        type="button"
        class="menu"
        data-testid="menu"
        aria-label="Conversations and settings"
        aria-controls="sidebar"
        aria-expanded={drawer}
        onClick={toggle}
      >
        ☰
      </button>
      <a href="#/inbox" class="inbox-pill" data-testid="inbox-pill" hidden={!count}>
        Needs you {count}
      </a>
    </div>
  );
}

/** What the address opens: "Needs you", another channel's conversation read here, a conversation, or the welcome. */
function Page(props: {
  route: string;
  foreign: string | null;
  sessionId: string | null;
  inbox: ReturnType<typeof useInbox>['inbox'];
  loadInbox: () => Promise<void>;
  sessions: SessionSummary[];
  onView: (view: WebView) => void;
  onArchive: (id: string, archived: boolean) => Promise<void>;
  start: (text: string) => void;
  /** Into the open conversation (a new one's examples). */
  say: (text: string) => void;
  demoModel: boolean;
  models: readonly string[];
}) {
  const { route, foreign, sessionId } = props;
  if (route === '/inbox') return <InboxView inbox={props.inbox} reload={props.loadInbox} />;
  if (foreign) return <ReadOnlyConversation workflowId={foreign} />;
  if (sessionId)
    return (
      <Conversation
        key={sessionId}
        sessionId={sessionId}
        summary={props.sessions.find((s) => s.sessionId === sessionId)}
        onView={props.onView}
        onArchive={props.onArchive}
        models={props.models}
        empty={<Welcome start={props.say} demoModel={props.demoModel} />}
      />
    );
  return (
    <div id="transcript" data-testid="transcript">
      <Welcome start={props.start} demoModel={props.demoModel} />
    </div>
  );
}

/** The person's conversations: listed, archived, and a new one opened (with its first message). */
function useConversations(failed: (error: unknown) => void) {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  /** Archived or brought back here, until the server's list (visibility, a moment behind) says the same. */
  const archiving = useRef(new Map<string, boolean>());
  const loadSessions = useCallback(
    () =>
      api<{ sessions: SessionSummary[] }>('/sessions').then((r) => {
        for (const s of r.sessions)
          if (archiving.current.get(s.sessionId) === !!s.archived) archiving.current.delete(s.sessionId);
        setSessions(
          r.sessions.map((s) =>
            archiving.current.has(s.sessionId) ? { ...s, archived: archiving.current.get(s.sessionId) } : s,
          ),
        );
      }, failed),
    [failed],
  );
  /** Shown at once; a list read before visibility caught up does not undo it. */
  const archive = async (id: string, archived: boolean) => {
    await post(`/sessions/${id}/archive`, { archived });
    archiving.current.set(id, archived);
    setSessions((list) => list.map((s) => (s.sessionId === id ? { ...s, archived } : s)));
    setTimeout(() => void loadSessions(), 1_500);
  };
  const newConversation = async (first?: string, messageId: string = crypto.randomUUID()) => {
    const { sessionId: id } = await post<{ sessionId: string }>('/sessions', {});
    if (first) await post(`/sessions/${id}/messages`, { text: first, messageId });
    else notStartedYet.add(id);
    location.hash = id;
    setTimeout(() => void loadSessions(), 800);
  };
  return { sessions, loadSessions, archive, newConversation };
}

/** Standing approvals the person gave (here, and everywhere), and taking one back. */
function useGrants(sessionId: string | null, failed: (error: unknown) => void) {
  const [grants, setGrants] = useState<Grant[]>([]);
  const loadGrants = useCallback(
    () =>
      api<{ grants: Grant[] }>(`/grants${sessionId ? `?sessionId=${sessionId}` : ''}`).then(
        (r) => setGrants(r.grants),
        () => {}, // grants need a worker; the conversation already says when none answers
      ),
    [sessionId],
  );
  const revoke = async (grant: Grant) => {
    await post('/grants/revoke', {
      grantId: grant.id,
      scope: grant.scope,
      ...(grant.scope === 'session' ? { sessionId } : {}),
    }).catch(failed);
    setTimeout(() => void loadGrants(), 500);
  };
  return { grants, loadGrants, revoke };
}

/** The sidebar (a drawer on a phone): who is signed in, "Needs you", the conversations (search), grants. */
import { useState } from 'preact/hooks';
import { day } from './format';
import type { Grant, Me, SessionSummary } from './types';

export function Who({ me, signIn }: { me: Me | null; signIn: string | null | undefined }) {
  if (me)
    return (
      <div class="who" id="who" data-testid="who">
        <span data-testid="signed-in-as">Signed in as @{me.userId}</span>
        {me.mode === 'login' && (
          <button type="button" class="link" data-testid="sign-out" onClick={signOut}>
            Sign out
          </button>
        )}
      </div>
    );
  return (
    <div class="who" id="who" data-testid="who">
      {signIn ? (
        <a href={signIn} data-testid="sign-in">
          Sign in
        </a>
      ) : (
        <span data-testid="signed-out">Not signed in</span>
      )}
    </div>
  );
}

async function signOut() {
  await fetch('/auth/logout', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  location.reload();
}

export function Sidebar(props: {
  me: Me | null;
  signIn: string | null | undefined;
  sessions: SessionSummary[];
  current: string | null;
  inboxCount: number;
  grants: Grant[];
  onNew: () => void;
  onRevoke: (grant: Grant) => void;
  open: boolean;
  /** A link was followed (the drawer closes even when it names what is already open). */
  onNavigate: () => void;
}) {
  const [search, setSearch] = useState('');
  const [showArchived, setShowArchived] = useState(false);
  const archived = props.sessions.filter((s) => s.archived).length;
  const shown = props.sessions.filter(
    (s) =>
      !!s.archived === showArchived &&
      `${s.title ?? ''} ${s.sessionId}`.toLowerCase().includes(search.trim().toLowerCase()),
  );
  return (
    <aside
      id="sidebar"
      class={props.open ? 'open' : ''}
      aria-label="Conversations"
      onClick={(e) => (e.target as HTMLElement).closest('a') && props.onNavigate()}
    >
      <h1>Agent</h1>
      <Who me={props.me} signIn={props.signIn} />
      <button type="button" id="new-session" data-testid="new-session" onClick={props.onNew}>
        + New conversation
      </button>
      <a
        href="#/inbox"
        class={`inbox-link${props.current === '/inbox' ? ' active' : ''}`}
        data-testid="inbox-link"
        aria-current={props.current === '/inbox' ? 'page' : undefined}
      >
        Needs you{' '}
        <span class={`count${props.inboxCount ? ' some' : ''}`} data-testid="inbox-count">
          {props.inboxCount}
        </span>
      </a>
      <label class="search">
        <span class="visually-hidden">Search conversations</span>
        <input
          type="search"
          placeholder="Search conversations"
          value={search}
          data-testid="session-search"
          onInput={(e) => setSearch(e.currentTarget.value)}
        />
      </label>
      <nav id="sessions" data-testid="sessions" aria-label="Your conversations">
        {shown.map((s) => (
          <a
            href={`#${s.sessionId}`}
            class={s.sessionId === props.current ? 'active' : ''}
            aria-current={s.sessionId === props.current ? 'page' : undefined}
            data-testid="session-link"
            key={s.sessionId}
          >
            <span class="session-title">{s.title ?? `Conversation ${s.sessionId.slice(0, 8)}`}</span>
            <small>
              {day(s.startTime)}
              {s.status && s.status !== 'idle' ? ` · ${s.status.replace('_', ' ')}` : ''}
            </small>
          </a>
        ))}
        {!shown.length && (
          <p class="meta">
            {search
              ? 'No conversation matches.'
              : showArchived
                ? 'Nothing archived.'
                : 'No conversations yet.'}
          </p>
        )}
      </nav>
      {(archived > 0 || showArchived) && (
        <button
          type="button"
          class="link archived-toggle"
          data-testid="show-archived"
          aria-pressed={showArchived}
          onClick={() => setShowArchived(!showArchived)}
        >
          {showArchived ? '← Your conversations' : `Archived (${archived})`}
        </button>
      )}
      <section id="grants-panel" aria-labelledby="grants-title">
        <h2 id="grants-title">Your always-allow grants</h2>
        <ul id="grants" data-testid="grants">
          {props.grants.length ? (
            props.grants.map((g) => (
              <li data-testid="grant" key={g.id}>
                <span>{`${g.toolName}${g.pattern ? ` “${g.pattern}”` : ''} · ${g.scope === 'user' ? 'everywhere' : 'this conversation'}`}</span>
                <button type="button" data-testid="revoke" onClick={() => props.onRevoke(g)}>
                  Revoke
                </button>
              </li>
            ))
          ) : (
            <li>none</li>
          )}
        </ul>
      </section>
    </aside>
  );
}

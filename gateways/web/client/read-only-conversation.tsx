/**
 * A Slack, Discord or Teams conversation, or a mission run, read on the web by someone who may decide in it: the same
 * transcript and gates as a web conversation, read-only (people reply in their channel; gates are decided in
 * "Needs you"), read again every few seconds.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from './api';
import { GateActionsContext, type GateActions } from './gates';
import { Transcript } from './transcript';
import type { WebView } from './types';

const READ_EVERY_MS = 3_000;
const READ_ONLY: GateActions = {
  decide: async () => {},
  answer: async () => {},
  problem: () => {},
  readOnly: true,
};

function channelWords(workflowId: string): string {
  if (workflowId.startsWith('mission-run:')) return 'A mission run';
  if (workflowId.startsWith('session:teams:')) return 'A Teams conversation';
  return workflowId.startsWith('session:slack:') ? 'A Slack thread' : 'A Discord conversation';
}

export function ReadOnlyConversation({ workflowId }: { workflowId: string }) {
  const [view, setView] = useState<WebView | null>(null);
  const [info, setInfo] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    const read = () =>
      api<WebView>(`/conversations/${encodeURIComponent(workflowId)}`).then(
        (v) => !stopped && (setView(v), setInfo(null)),
        (error: unknown) => !stopped && setInfo(messageOf(error)),
      );
    void read();
    const timer = setInterval(() => !document.hidden && void read(), READ_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [workflowId]);
  return (
    <GateActionsContext.Provider value={READ_ONLY}>
      <header class="conversation-header">
        <h2 id="title" class="title">
          {channelWords(workflowId)}
        </h2>
        {view && (
          <span class={`status ${view.status}`} data-testid="status" data-status={view.status}>
            {view.status.replace('_', ' ')}
          </span>
        )}
        <span class="meta">Read-only here: reply where it happens.</span>
      </header>
      {info && (
        <div class="banner" data-testid="banner" role="status">
          {info}
        </div>
      )}
      <div id="transcript" data-testid="transcript">
        {view && <Transcript view={view} partial={undefined} />}
      </div>
    </GateActionsContext.Provider>
  );
}

/**
 * The one writer of what the server shows of a session's open gates with no worker running: the memo's entries
 * (dialogs, "Needs you") and the `AgentDeciders` search attribute ("Needs you" finds a person's gates by it). It looks
 * after every change to the session's state (every change touches it: opened, decided, approved in part, handed over,
 * escalated, expired, stopped, carried) and writes only what changed, since each write is a history event and a
 * visibility write. The first look compares with what the previous run left (continue-as-new keeps both).
 */
import * as wf from '@temporalio/workflow';
import { AgentDeciders } from '../../common/search-attributes';
import { GATE_MEMO_KEY, GATES_OPEN_MEMO_KEY, MAX_MEMO_GATES, gateDeciders, gateMemos } from './gate-memo';
import type { SessionSettings } from './settings';
import type { SessionState } from './state';

export interface PublicationSource {
  state: SessionState;
  /** The run's settings: a change (read with the namespace's registered attributes) is looked at too. */
  settings: () => SessionSettings;
  /** Whether the namespace has `AgentDeciders` (a namespace set up by hand may not: then only the memo is kept). */
  mayWriteDeciders: () => boolean;
  /** A mission run's mission: "Needs you" names it. */
  missionName?: string;
}

export async function publishOpenGates(source: PublicationSource): Promise<never> {
  const { state } = source;
  const info = wf.workflowInfo();
  let memo = JSON.stringify(info.memo?.[GATE_MEMO_KEY] ?? {});
  let deciders = (info.typedSearchAttributes.get(AgentDeciders) ?? []).join('\n');
  let seen: { version: number; settings: SessionSettings } | undefined;
  for (;;) {
    await wf.condition(() => seen?.version !== state.version || seen.settings !== source.settings());
    seen = { version: state.version, settings: source.settings() };
    const open = state.pendingGates();
    const entries = gateMemos(open);
    const nextMemo = JSON.stringify(entries);
    if (nextMemo !== memo) {
      memo = nextMemo;
      wf.upsertMemo({
        [GATE_MEMO_KEY]: entries,
        [GATES_OPEN_MEMO_KEY]: open.length > MAX_MEMO_GATES ? open.length : undefined,
        ...(source.missionName ? { missionName: source.missionName } : {}),
      });
    }
    const nextDeciders = gateDeciders(open);
    if (nextDeciders.join('\n') !== deciders && source.mayWriteDeciders()) {
      deciders = nextDeciders.join('\n');
      wf.upsertSearchAttributes([{ key: AgentDeciders, value: nextDeciders }]);
    }
  }
}

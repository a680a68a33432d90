/**
 * A conversation's messages in order: what people said, the agent's answers (Markdown), each tool step as a
 * collapsible card (arguments, gates and who decided, output), budget gates where they opened, and the answer
 * being written. Each outcome is said once: on its step.
 */
import { CopyButton, Markdown } from './markdown';
import { isBudgetGate } from '../../../common/gates/words';
import { GateCard } from './gates';
import { time } from './format';
import type { ApprovalGate, ToolCall, ToolResult, WebGate, WebView } from './types';
import { MessageActions, SideBySide } from './forks';

function waitingWord(gate: WebGate | undefined): string {
  if (!gate || gate.status !== 'pending') return 'queued';
  if (gate.kind === 'question') return 'waiting for an answer';
  if (gate.kind === 'credential') return 'waiting for sign-in';
  return 'waiting for approval';
}

/** How long a step took, from its call to its result. */
function took(startedAt: number, result: ToolResult | undefined): string | null {
  if (!result) return null;
  const ms = result.at - startedAt;
  return ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** A JSON result (an HTTP response, a mission's list) laid out to be read; anything else as it came. */
function readable(content: string): string {
  if (!/^\s*[[{]/.test(content)) return content;
  try {
    return JSON.stringify(JSON.parse(content), null, 2);
  } catch {
    return content;
  }
}

/**
 * A call that did not run because of its gate's outcome (denied, expired, superseded, stopped): the gate's line
 * says so, so the result written for the model ("not run: …") is not shown as a second copy.
 */
function saidByGate(result: ToolResult, gate: WebGate | undefined): boolean {
  const notRun = ['denied', 'expired', 'superseded', 'cancelled'].includes(result.status);
  return notRun && !!gate?.resolution;
}

function ToolStep({
  call,
  at,
  result,
  gates,
  recent,
}: {
  call: ToolCall;
  at: number;
  result: ToolResult | undefined;
  gates: WebGate[];
  /** A step of the latest turn: shown open; earlier ones fold to their one-line summary. */
  recent: boolean;
}) {
  const gate = gates[gates.length - 1];
  const open = recent || gates.some((g) => g.status === 'pending');
  const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args, null, 2);
  const duration = took(at, result);
  return (
    <details class="call" data-testid="tool-call" data-tool={call.name} open={open || undefined}>
      <summary>
        <span class="tool-name">{call.name}</span>
        {result ? (
          <span class={`chip ${result.status}`} data-testid="result-status">
            {result.status}
          </span>
        ) : (
          <span class="chip">{waitingWord(gate)}</span>
        )}
        {duration && <span class="meta">{duration}</span>}
      </summary>
      {/* A question's arguments are the form itself; other calls show exactly what would run. */}
      {gate?.kind !== 'question' && (
        <div class="code">
          <CopyButton text={args} />
          <pre data-testid="tool-args">{args}</pre>
        </div>
      )}
      {gates.map((g) => (
        <GateCard gate={g} key={g.id} />
      ))}
      {result && !saidByGate(result, gate) && (
        <div class="result">
          <div class="code">
            <CopyButton text={result.content} />
            <pre data-testid="tool-result">{readable(result.content)}</pre>
          </div>
        </div>
      )}
    </details>
  );
}

function MissionGate({ gate }: { gate: WebGate & { remote: NonNullable<WebGate['remote']> } }) {
  return (
    <section class="call" data-testid="mission-gate" data-mission={gate.remote.missionName}>
      <h3>{`Mission · ${gate.remote.missionName} · ${gate.toolName} · acting as @${gate.requesterId}`}</h3>
      {gate.kind === 'approval' && !isBudgetGate(gate) && (
        <pre data-testid="tool-args">{JSON.stringify(gate.args, null, 2)}</pre>
      )}
      <GateCard gate={gate} />
    </section>
  );
}

export function Transcript({ view, partial }: { view: WebView; partial: string | undefined }) {
  const results = new Map(
    view.transcript.filter((m): m is ToolResult => m.role === 'tool').map((m) => [m.toolCallId, m]),
  );
  // A call can have several gates (an approval, then a sign-in): all are shown, the latest decides the chip.
  const gates = new Map<string, WebGate[]>();
  for (const g of view.gates) if (!g.remote) gates.set(g.toolCallId, [...(gates.get(g.toolCallId) ?? []), g]);
  // Budget gates belong to no tool call: each is shown after the message whose turn it holds.
  const budgetGates = view.gates.filter(
    (g): g is ApprovalGate => g.kind === 'approval' && isBudgetGate(g) && !g.remote,
  );
  const nodes = [];
  const lastAsked = view.transcript.findLastIndex((m) => m.role === 'user');
  const flushBudgetGates = (before: number) => {
    for (let next = budgetGates[0]; next && next.createdAt <= before; next = budgetGates[0]) {
      const g = budgetGates.shift()!;
      nodes.push(<GateCard gate={g} key={g.id} />);
    }
  };
  for (const [index, m] of view.transcript.entries()) {
    // A message's turn waits at a budget gate before it is answered: the gate shows below the message it holds.
    if (m.role !== 'user') flushBudgetGates(m.at);
    if (m.role === 'user') {
      nodes.push(
        <div class="msg user" data-testid="user-message" key={`u${m.at}${m.text.length}`}>
          <div class="meta">
            {`@${m.userId} · ${time(m.at)}`} <MessageActions message={m} />
          </div>
          <div class="text">{m.text}</div>
        </div>,
      );
      flushBudgetGates(m.at);
    }
    if (m.role !== 'assistant') continue;
    if (m.text)
      nodes.push(
        <div
          class={`msg assistant${m.synthetic ? ' synthetic' : ''}${m.stopped ? ' stopped' : ''}`}
          data-testid="assistant-message"
          key={`a${m.at}${m.text.length}`}
        >
          <div class="meta">
            {`agent · ${time(m.at)}${m.model ? ` · ${m.model}` : ''}`} <CopyButton text={m.text} />
            <MessageActions message={m} />
          </div>
          <Markdown text={m.text} />
        </div>,
      );
    for (const call of m.toolCalls)
      nodes.push(
        <ToolStep
          call={call}
          at={m.at}
          result={results.get(call.id)}
          gates={gates.get(call.id) ?? []}
          recent={index > lastAsked}
          key={call.id}
        />,
      );
  }
  flushBudgetGates(Infinity);
  nodes.push(<SideBySide view={view} key="side-by-side" />);
  if (partial)
    nodes.push(
      <div class="msg assistant streaming" data-testid="partial-answer" key="partial" aria-live="polite">
        <div class="meta">agent · writing…</div>
        <Markdown text={partial} />
      </div>,
    );
  for (const gate of view.gates)
    if (gate.remote)
      nodes.push(
        <MissionGate gate={gate as WebGate & { remote: NonNullable<WebGate['remote']> }} key={gate.id} />,
      );
  return <>{nodes}</>;
}

/**
 * The web chat: a thin view over the session workflow. Every action is an HTTP call that becomes a signal; the
 * page redraws from the workflow's state, streamed by the gateway. Browser code: type-checked with this folder's
 * tsconfig (DOM, no Node), served by the gateway as plain JavaScript (types stripped), one classic script.
 */
import type { Spend } from '../../../common/budgets';
import type { Grant } from '../../../common/grants';
import type { Answer, Question } from '../../../common/tools/ask-user';
import type {
  ApprovalGate,
  CredentialGate,
  Gate,
  GateOutcome,
  QuestionGate,
  SessionView,
} from '../../../workflows/session/contract';

/** What the web API adds to the workflow's view: a Connect link on credential gates, the Temporal UI link. */
type WebGate = Gate & { connectUrl?: string };
type WebView = Omit<SessionView, 'gates'> & { gates: WebGate[]; temporalUrl: string | null };
/** What a person has typed or picked on an open gate, kept across redraws. */
interface ApprovalDraft {
  reason: string;
  pattern: string;
  scope: 'session' | 'user';
  args: string;
  editing: boolean;
}
type QuestionDraft = Record<string, { selected: string[]; custom: string }>;
interface SessionSummary {
  sessionId: string;
  ownerId?: string;
  status?: string;
}

function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node as T;
}
const state: {
  user: string | null;
  sessionId: string | null;
  view: WebView | null;
  stream: EventSource | null;
  approvalDrafts: Record<string, ApprovalDraft>;
  questionDrafts: Record<string, QuestionDraft>;
  /** The answer being written (streamed), and how long the transcript was when it began. */
  partial: { streamId: string; text: string; done: boolean; base: number } | null;
} = {
  partial: null,
  user: null,
  sessionId: null,
  view: null,
  stream: null,
  approvalDrafts: {},
  questionDrafts: {},
};

type Child = Node | string | number | null | undefined | false | Child[];
interface Props {
  class?: string;
  dataset?: Record<string, string>;
  onclick?: (event: MouseEvent) => void;
  oninput?: (event: Event) => void;
  onchange?: (event: Event) => void;
  [attribute: string]: unknown;
}

function el(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = String(value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value as EventListener);
    else if (value !== undefined && value !== null && value !== false)
      node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity as 1) as (Node | string | number | null | undefined | false)[])
    if (child !== null && child !== undefined && child !== false)
      node.append(child instanceof Node ? child : String(child));
  return node;
}

/** What an input, select or textarea holds, from its event. */
const valueOf = (event: Event) => (event.target as HTMLInputElement).value;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

// The browser's session cookie (HttpOnly, SameSite=Strict) says who is calling; the page never names a user.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each caller reads the fields of its route
async function api(path: string, options: RequestInit = {}): Promise<any> {
  const response = await fetch(`/api${path}`, {
    ...options,
    headers: { 'content-type': 'application/json', ...(options.headers || {}) },
  });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) showSignIn(body);
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

$('stop').addEventListener('click', async () => {
  if (!state.sessionId) return;
  $<HTMLButtonElement>('stop').disabled = true;
  try {
    await api(`/sessions/${state.sessionId}/stop`, { method: 'POST', body: '{}' });
  } catch (error) {
    showBanner(`Stop was not sent: ${messageOf(error)}`);
  } finally {
    $<HTMLButtonElement>('stop').disabled = false;
  }
});

function showSignIn(body: { signIn?: string } | undefined) {
  const who = $('who');
  if (body && body.signIn)
    who.replaceChildren(el('a', { href: body.signIn, dataset: { testid: 'sign-in' } }, 'Sign in'));
  else who.replaceChildren(el('span', { dataset: { testid: 'signed-out' } }, 'Not signed in'));
  showBanner(
    body && body.signIn
      ? 'Sign in to chat with the agent.'
      : 'Not signed in: open the link printed when the agent started (it ends in ?token=…).',
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

// Minimal Markdown: fenced code blocks and **bold**; everything else is text (never HTML).
function markdown(text: string): Child[] {
  const parts = [];
  const fence = /```[a-z]*\n?([\s\S]*?)```/g;
  let last = 0;
  for (const match of text.matchAll(fence)) {
    parts.push(inline(text.slice(last, match.index)));
    parts.push(el('pre', {}, match[1]));
    last = match.index + match[0].length;
  }
  parts.push(inline(text.slice(last)));
  return parts;
}
function inline(text: string): Child[] {
  return text
    .split(/(\*\*[^*]+\*\*|`[^`]+`)/g)
    .map((piece) =>
      piece.startsWith('**') && piece.endsWith('**')
        ? el('strong', {}, piece.slice(2, -2))
        : piece.startsWith('`') && piece.endsWith('`') && piece.length > 1
          ? el('code', {}, piece.slice(1, -1))
          : piece,
    );
}

const time = (at: number) => new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

function describe(gate: WebGate): string {
  const r = gate.resolution;
  if (!r) return 'Waiting for a decision';
  const budget = gate.kind === 'approval' && gate.toolName === 'budget';
  const provider = gate.kind === 'credential' ? gate.providerName : '';
  const words: Record<GateOutcome, string> = {
    approved: budget ? 'Continued' : 'Approved',
    edited: 'Edited & approved',
    always: 'Always allowed',
    denied: budget ? 'Stopped' : 'Denied',
    answered: 'Answered',
    connected: `${provider} connected`,
    expired:
      gate.kind === 'question'
        ? 'Expired: nobody answered'
        : gate.kind === 'credential'
          ? `Expired: ${provider} was not connected`
          : 'Expired: nobody decided',
    superseded: 'Not run: superseded by a new message',
    stopped: 'Stopped',
    cancelled: 'Cancelled',
  };
  const who = r.by && r.by !== 'system' ? ` by @${r.by}` : '';
  const grant = r.grant
    ? ` (${r.grant.pattern ? `"${r.grant.pattern}"` : 'every call'}, ${r.grant.scope === 'user' ? 'everywhere' : 'in this conversation'})`
    : '';
  return `${words[r.outcome]}${who} at ${time(r.at)}${r.reason ? ` — “${r.reason}”` : ''}${grant}`;
}

async function decide(gate: Gate, choice: string, extra: Record<string, unknown> = {}) {
  try {
    await api('/decisions', {
      method: 'POST',
      body: JSON.stringify({
        workflowId: `session:web:${state.sessionId}`,
        gateId: gate.id,
        choice,
        ...extra,
      }),
    });
  } catch (error) {
    showBanner(messageOf(error));
  }
}

// A question gate (ask_user): radio buttons for one choice, checkboxes for several, "Other" text where allowed.
function renderQuestionGate(gate: QuestionGate): HTMLElement {
  const box = el('div', {
    class: `gate question ${gate.status === 'pending' ? 'pending' : 'decided'}`,
    dataset: { testid: 'question-gate', gateId: gate.id, status: gate.status },
  });
  if (gate.status !== 'pending') {
    box.append(el('div', { dataset: { testid: 'gate-outcome' } }, describe(gate)));
    for (const answer of gate.resolution?.answers || []) {
      const picked =
        [...answer.selected, ...(answer.custom ? [`“${answer.custom}”`] : [])].join(', ') || '(no answer)';
      box.append(
        el('div', { dataset: { testid: 'answer' } }, el('strong', {}, `${answer.question}: `), picked),
      );
    }
    return box;
  }
  const draft = (state.questionDrafts[gate.id] ||= Object.fromEntries(
    gate.questions.map((q) => [q.label, { selected: [], custom: '' }]),
  ));
  box.append(
    el(
      'div',
      { dataset: { testid: 'gate-outcome' } },
      `Question for @${[gate.requesterId, ...gate.approvers].join(', @')}`,
    ),
  );
  gate.questions.forEach((q, qi) => {
    const answer = (draft[q.label] ||= { selected: [], custom: '' });
    const field = el(
      'fieldset',
      { dataset: { testid: 'question', label: q.label } },
      el(
        'legend',
        {},
        `${gate.questions.length > 1 ? `${qi + 1}. ` : ''}${q.label}${q.required ? ' *' : ''}`,
      ),
      el('div', {}, q.prompt),
    );
    for (const option of q.options) {
      const input = el('input', {
        type: q.multi_select ? 'checkbox' : 'radio',
        name: `${gate.id}-${qi}`,
        value: option.label,
        checked: answer.selected.includes(option.label),
        dataset: { testid: 'option' },
        onchange: (e) => {
          if (q.multi_select)
            answer.selected = (e.target as HTMLInputElement).checked
              ? [...answer.selected, option.label]
              : answer.selected.filter((l) => l !== option.label);
          else {
            answer.selected = [option.label];
            answer.custom = '';
          }
        },
      });
      field.append(
        el(
          'label',
          { class: 'option' },
          input,
          ` ${option.label}`,
          option.description ? el('small', {}, ` — ${option.description}`) : null,
        ),
      );
    }
    if (q.allow_custom) {
      field.append(
        el(
          'label',
          { class: 'option' },
          'Other: ',
          el('input', {
            value: answer.custom,
            maxlength: 2000,
            dataset: { testid: 'custom' },
            oninput: (e) => {
              answer.custom = valueOf(e);
              if (!q.multi_select && answer.custom) answer.selected = [];
            },
          }),
        ),
      );
    }
    box.append(field);
  });
  box.append(
    el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          class: 'approve',
          dataset: { testid: 'submit-answers' },
          onclick: () => submitAnswers(gate, draft),
        },
        'Submit',
      ),
    ),
    // The same typed replies as in Slack and Discord (common/tools/ask-user.ts parseTextAnswers).
    el('div', { class: 'hint', dataset: { testid: 'typed-answer-hint' } }, typedAnswerHint(gate.questions)),
  );
  return box;
}

/** Mirrors typedAnswerHint in common/tools/ask-user.ts: how to answer by typing in the chat instead. */
function typedAnswerHint(questions: Question[]): string {
  const numbers = (q: Question, i: number) =>
    q.options.length
      ? `${i + 1}: ${q.multi_select && q.options.length > 1 ? '1,2' : '1'}`
      : `${i + 1}: your answer`;
  const q = questions[0];
  if (questions.length === 1 && q) {
    if (!q.options.length) return 'Or type "other: your answer" in the chat.';
    return `Or type ${q.multi_select ? 'option numbers, e.g. "1,3"' : 'an option number'}${q.allow_custom ? ', or "other: your answer"' : ''} in the chat.`;
  }
  return `Or type "question: answer" for each in the chat, e.g. "${questions.map(numbers).join('; ')}".`;
}

async function submitAnswers(gate: QuestionGate, draft: QuestionDraft) {
  const answers: Answer[] = gate.questions.map((q) => {
    const { selected, custom } = draft[q.label] ?? { selected: [], custom: '' };
    return { question: q.label, selected, ...(custom.trim() ? { custom: custom.trim() } : {}) };
  });
  try {
    await api('/answers', {
      method: 'POST',
      body: JSON.stringify({ workflowId: `session:web:${state.sessionId}`, gateId: gate.id, answers }),
    });
  } catch (error) {
    showBanner(messageOf(error));
  }
}

// A credential gate: the person connects the provider in a new tab; the session resumes by itself.
function renderCredentialGate(gate: CredentialGate & { connectUrl?: string }): HTMLElement {
  const box = el('div', {
    class: `gate ${gate.status === 'pending' ? 'pending' : 'decided'}`,
    dataset: { testid: 'gate', gateId: gate.id, status: gate.status },
  });
  if (gate.status !== 'pending') {
    box.append(el('div', { dataset: { testid: 'gate-outcome' } }, describe(gate)));
    return box;
  }
  box.append(
    el(
      'div',
      { dataset: { testid: 'gate-outcome' } },
      `Needs @${gate.requesterId} to connect ${gate.providerName}. The tool runs as soon as that is done.`,
    ),
  );
  if (gate.note) box.append(el('div', { class: 'gate-note', dataset: { testid: 'gate-note' } }, gate.note));
  if (gate.connectUrl)
    box.append(
      el(
        'a',
        {
          class: 'button connect',
          href: gate.connectUrl,
          target: '_blank',
          rel: 'noopener',
          dataset: { testid: 'connect' },
        },
        `Connect ${gate.providerName}`,
      ),
    );
  return box;
}

// Who may approve (the same rule as workflows/session/gates.ts decidersLine): four-eyes leaves the
// requester out of the approvers, a quorum needs several different people, and nobody may mean nobody.
function approvalRule(gate: ApprovalGate): string {
  const needed = gate.approvalsNeeded || 1;
  const selfApprove = gate.selfApprove !== false;
  if (needed === 1 && selfApprove)
    return `Needs approval from @${[gate.requesterId, ...gate.approvers].join(', @')}`;
  const may = [
    ...(selfApprove ? [gate.requesterId] : []),
    ...gate.approvers.filter((a) => a !== gate.requesterId),
  ];
  const possible = new Set([...may, ...(gate.approvals || []).map((a) => a.by)]).size;
  if (possible < needed)
    return `Nobody can approve this call (${needed === 1 ? 'self-approval is off and no other approver is configured' : `it needs ${needed} approvals from different people`}): it can only be denied or expire`;
  const who = may.map((id) => `@${id}`).join(', ');
  const rule =
    needed > 1
      ? `Needs ${needed} approvals from different people among ${who}`
      : `Needs approval from ${who}`;
  return selfApprove ? rule : `${rule} (not @${gate.requesterId}, who asked: they may only deny it)`;
}

// "1 of 2 approvals: @bob (14:05)" while a quorum is open; who approved when, once decided.
function approvalProgress(gate: ApprovalGate): string {
  const needed = gate.approvalsNeeded || 1;
  const approvals = gate.approvals || [];
  if (needed <= 1) return '';
  const names = approvals.map((a) => `@${a.by} (${time(a.at)})`).join(', ');
  return `${approvals.length} of ${needed} approvals${names ? `: ${names}` : ''}`;
}

// "12,345 tokens · $0.05" (common/budgets.ts formatSpend): what this conversation's model calls used.
function spendText(usage: Spend): string {
  const tokens = `${usage.tokens.toLocaleString('en-US')} tokens`;
  if (!(usage.costUsd > 0)) return tokens;
  const usd =
    usage.costUsd >= 1 ? usage.costUsd.toFixed(2) : usage.costUsd.toPrecision(3).replace(/\.?0+$/, '');
  return `${tokens} · $${usd}`;
}

// A budget gate: "This conversation has used $4.80 of $5.00. Continue with $5.00 more?" and Continue / Stop.
function renderBudgetGate(gate: ApprovalGate): HTMLElement {
  const box = el(
    'div',
    {
      class: `call gate ${gate.status === 'pending' ? 'pending' : 'decided'}`,
      dataset: { testid: 'budget-gate', gateId: gate.id, status: gate.status },
    },
    el('h3', {}, 'Budget'),
    el('div', { dataset: { testid: 'budget-question' } }, gate.subject),
    el(
      'div',
      { dataset: { testid: 'gate-outcome' } },
      gate.status === 'pending' ? approvalRule(gate) : describe(gate),
    ),
  );
  if (gate.status !== 'pending') return box;
  box.append(
    el(
      'div',
      { class: 'actions' },
      el(
        'button',
        { class: 'approve', dataset: { testid: 'budget-continue' }, onclick: () => decide(gate, 'approve') },
        'Continue',
      ),
      el(
        'button',
        { class: 'deny', dataset: { testid: 'budget-stop' }, onclick: () => decide(gate, 'deny') },
        'Stop',
      ),
    ),
  );
  return box;
}

function renderGate(gate: WebGate): HTMLElement {
  if (gate.kind === 'question') return renderQuestionGate(gate);
  if (gate.kind === 'credential') return renderCredentialGate(gate);
  const box = el('div', {
    class: `gate ${gate.status === 'pending' ? 'pending' : 'decided'}`,
    dataset: { testid: 'gate', gateId: gate.id, status: gate.status },
  });
  box.append(
    el(
      'div',
      { dataset: { testid: 'gate-outcome' } },
      gate.status === 'pending' ? approvalRule(gate) : describe(gate),
    ),
  );
  const progress = approvalProgress(gate);
  if (progress) box.append(el('div', { class: 'meta', dataset: { testid: 'gate-approvals' } }, progress));
  if (gate.status !== 'pending') return box;
  if (gate.expiresAt)
    box.append(el('div', { class: 'meta' }, `Expires at ${new Date(gate.expiresAt).toLocaleString()}`));
  const draft = (state.approvalDrafts[gate.id] ||= {
    reason: '',
    pattern: gate.subject,
    scope: 'session',
    args: JSON.stringify(gate.args, null, 2),
    editing: false,
  });
  // Four-eyes and quorum: no Always allow (a grant would skip them), and under a quorum no Edit.
  const needed = gate.approvalsNeeded || 1;
  const guarded = needed > 1 || gate.selfApprove === false;
  box.append(decideRow(gate, draft), alwaysRow(gate, draft, guarded), ...editRows(gate, draft, needed > 1));
  return box;
}

function decideRow(gate: ApprovalGate, draft: ApprovalDraft): HTMLElement {
  const reason = el('input', {
    placeholder: 'Reason (optional, told to the agent)',
    value: draft.reason,
    dataset: { testid: 'deny-reason' },
    oninput: (e) => (draft.reason = valueOf(e)),
  });
  return el(
    'div',
    { class: 'actions' },
    el(
      'button',
      { class: 'approve', dataset: { testid: 'approve' }, onclick: () => decide(gate, 'approve') },
      'Approve',
    ),
    reason,
    el(
      'button',
      {
        class: 'deny',
        dataset: { testid: 'deny' },
        onclick: () => decide(gate, 'deny', draft.reason.trim() ? { reason: draft.reason.trim() } : {}),
      },
      'Deny',
    ),
  );
}

function alwaysRow(gate: ApprovalGate, draft: ApprovalDraft, hidden: boolean): HTMLElement {
  const scope = el(
    'select',
    {
      dataset: { testid: 'grant-scope' },
      onchange: (e) => (draft.scope = valueOf(e) === 'user' ? 'user' : 'session'),
    },
    el('option', { value: 'session', selected: draft.scope === 'session' }, 'in this conversation'),
    el('option', { value: 'user', selected: draft.scope === 'user' }, 'everywhere for me'),
  );
  const pattern = el('input', {
    value: draft.pattern,
    size: 18,
    title: 'Pattern: * matches anything; empty means exactly this call',
    dataset: { testid: 'grant-pattern' },
    oninput: (e) => (draft.pattern = valueOf(e)),
  });
  return el(
    'div',
    { class: 'actions', hidden },
    el(
      'button',
      {
        dataset: { testid: 'always' },
        onclick: () =>
          decide(gate, 'always', {
            scope: draft.scope,
            ...(draft.pattern.trim() ? { pattern: draft.pattern.trim() } : {}),
          }),
      },
      'Always allow',
    ),
    scope,
    'matching',
    pattern,
  );
}

/** Edit & approve…: the button (not under a quorum) and the arguments editor it opens. */
function editRows(gate: ApprovalGate, draft: ApprovalDraft, hidden: boolean): HTMLElement[] {
  const editor = el(
    'textarea',
    { rows: 4, dataset: { testid: 'edit-args' }, oninput: (e) => (draft.args = valueOf(e)) },
    draft.args,
  );
  const editRow = el(
    'div',
    { class: 'actions', hidden: !draft.editing },
    editor,
    el(
      'button',
      {
        dataset: { testid: 'edit-submit' },
        onclick: () => {
          let args;
          try {
            args = JSON.parse(draft.args);
          } catch (error) {
            return showBanner(`The arguments are not valid JSON: ${messageOf(error)}`);
          }
          void decide(gate, 'edit', { args });
        },
      },
      'Approve with these arguments',
    ),
  );
  const toggle = el(
    'div',
    { class: 'actions', hidden },
    el(
      'button',
      {
        dataset: { testid: 'edit' },
        onclick: () => {
          draft.editing = !draft.editing;
          editRow.hidden = !draft.editing;
        },
      },
      'Edit & approve…',
    ),
  );
  return [toggle, editRow];
}

function render() {
  const view = state.view;
  if (!view) return;
  renderHeader(view);
  const transcript = $('transcript');
  const nodes = transcriptNodes(view);
  const partial = visiblePartial(view);
  if (partial)
    nodes.push(
      el(
        'div',
        { class: 'msg assistant streaming', dataset: { testid: 'partial-answer' } },
        el('div', { class: 'meta' }, 'agent · writing…'),
        ...markdown(partial),
      ),
    );
  // Gates of mission runs reporting here: shown on their own, decided here, run there.
  for (const gate of view.gates)
    if (gate.remote)
      nodes.push(renderMissionGate(gate as WebGate & { remote: NonNullable<WebGate['remote']> }));
  const atBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
  const active = document.activeElement;
  const focused = active instanceof HTMLElement && transcript.contains(active) ? active.dataset.testid : null;
  transcript.replaceChildren(...nodes);
  if (focused) transcript.querySelector<HTMLElement>(`[data-testid="${focused}"]`)?.focus();
  if (atBottom) transcript.scrollTop = transcript.scrollHeight;
  $('notices').replaceChildren(
    ...view.notices
      .slice(-4)
      .map((n) => el('div', { class: 'notice', dataset: { testid: 'notice' } }, `${time(n.at)} · ${n.text}`)),
  );
}

/** The status, Stop, spend and Temporal link above the conversation. */
function renderHeader(view: WebView): void {
  $('status').textContent = view.status.replace('_', ' ');
  $('status').className = `status ${view.status}`;
  $('status').dataset.status = view.status;
  // Stop shows while a turn runs or waits on a gate; the workflow decides whether this person may stop it.
  $('stop').hidden = view.status === 'idle';
  $('usage').textContent = view.usage && view.usage.calls ? spendText(view.usage) : '';
  const link = $<HTMLAnchorElement>('temporal-link');
  if (view.temporalUrl) {
    link.href = view.temporalUrl;
    link.hidden = false;
  } else link.hidden = true;
}

/** The messages and tool calls in order, each budget gate where it opened. */
function transcriptNodes(view: WebView): HTMLElement[] {
  const results = new Map(view.transcript.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
  // A call can have several gates (an approval, then a sign-in): all are shown, the latest decides the chip.
  const gates = new Map<string, WebGate[]>();
  for (const g of view.gates) gates.set(g.toolCallId, [...(gates.get(g.toolCallId) || []), g]);
  const nodes: HTMLElement[] = [];
  // Budget gates belong to no tool call: each is shown where it opened, between the messages around it.
  const budgetGates = view.gates.filter(
    (g): g is ApprovalGate => g.kind === 'approval' && g.toolName === 'budget' && !g.remote,
  );
  const flushBudgetGates = (before: number) => {
    for (let next = budgetGates[0]; next && next.createdAt <= before; next = budgetGates[0])
      nodes.push(renderBudgetGate(budgetGates.shift()!));
  };
  for (const m of view.transcript) {
    flushBudgetGates(m.at);
    if (m.role === 'user')
      nodes.push(
        el(
          'div',
          { class: 'msg user', dataset: { testid: 'user-message' } },
          el('div', { class: 'meta' }, `@${m.userId} · ${time(m.at)}`),
          m.text,
        ),
      );
    if (m.role !== 'assistant') continue;
    if (m.text)
      nodes.push(
        el(
          'div',
          {
            class: `msg assistant${m.synthetic ? ' synthetic' : ''}`,
            dataset: { testid: 'assistant-message' },
          },
          el('div', { class: 'meta' }, `agent · ${time(m.at)}`),
          ...markdown(m.text),
        ),
      );
    for (const call of m.toolCalls)
      nodes.push(renderToolCall(call, results.get(call.id), gates.get(call.id) || []));
  }
  flushBudgetGates(Infinity);
  return nodes;
}

type WebToolCall = Extract<WebView['transcript'][number], { role: 'assistant' }>['toolCalls'][number];
type WebToolResult = Extract<WebView['transcript'][number], { role: 'tool' }>;

/** One tool call: its state chip, what would run, its gates and its result. */
function renderToolCall(
  call: WebToolCall,
  result: WebToolResult | undefined,
  callGates: WebGate[],
): HTMLElement {
  const gate = callGates[callGates.length - 1];
  const waiting =
    gate && gate.status === 'pending'
      ? gate.kind === 'question'
        ? 'waiting for an answer'
        : gate.kind === 'credential'
          ? 'waiting for sign-in'
          : 'waiting for approval'
      : 'queued';
  return el(
    'div',
    { class: 'call', dataset: { testid: 'tool-call', tool: call.name } },
    el(
      'h3',
      {},
      `Tool · ${call.name}`,
      result
        ? el('span', { class: `chip ${result.status}`, dataset: { testid: 'result-status' } }, result.status)
        : el('span', { class: 'chip' }, waiting),
    ),
    // A question's arguments are the form itself; other calls show exactly what would run.
    gate && gate.kind === 'question'
      ? null
      : el(
          'pre',
          { dataset: { testid: 'tool-args' } },
          typeof call.args === 'string' ? call.args : JSON.stringify(call.args, null, 2),
        ),
    ...callGates.map(renderGate),
    result
      ? el('div', { class: 'result' }, el('pre', { dataset: { testid: 'tool-result' } }, result.content))
      : null,
  );
}

function renderMissionGate(gate: WebGate & { remote: NonNullable<WebGate['remote']> }): HTMLElement {
  const budget = gate.kind === 'approval' && gate.toolName === 'budget';
  return el(
    'div',
    { class: 'call', dataset: { testid: 'mission-gate', mission: gate.remote.missionName } },
    el('h3', {}, `Mission · ${gate.remote.missionName} · ${gate.toolName} · acting as @${gate.requesterId}`),
    gate.kind === 'approval' && !budget
      ? el('pre', { dataset: { testid: 'tool-args' } }, JSON.stringify(gate.args, null, 2))
      : null,
    gate.kind === 'approval' && budget ? renderBudgetGate(gate) : renderGate(gate),
  );
}

function showBanner(text: string): void {
  $('banner').textContent = text;
  $('banner').hidden = !text;
}

/**
 * The streamed text to show below the transcript, if any: it goes once the final message is in the view (the
 * stream said it is done, or the answer with this text arrived, or the turn ended); a failed call's is empty.
 */
function visiblePartial(view: WebView): string | undefined {
  const partial = state.partial;
  // An idle conversation writes nothing: a partial left over (its end lost, a stopped turn) is not shown.
  if (!partial || !partial.text || view.status === 'idle') return undefined;
  const grown = view.transcript.length > partial.base;
  const last = view.transcript.at(-1);
  const arrived = last?.role === 'assistant' && last.text === partial.text;
  if (grown && (partial.done || arrived)) return undefined;
  return partial.text;
}

function openSession(sessionId: string): void {
  state.sessionId = sessionId;
  state.view = null;
  state.partial = null;
  location.hash = sessionId;
  $('title').textContent = `Conversation ${sessionId.slice(0, 8)}`;
  $('transcript').replaceChildren();
  $('notices').replaceChildren();
  $('status').textContent = '';
  $('temporal-link').hidden = true;
  showBanner('');
  if (state.stream) state.stream.close();
  const stream = new EventSource(`/api/sessions/${sessionId}/stream`);
  stream.addEventListener('state', (event) => {
    const previousStatus = state.view && state.view.status;
    showBanner('');
    const view: WebView = JSON.parse(event.data);
    state.view = view;
    render();
    void loadGrants();
    if (previousStatus !== view.status) void loadSessions();
  });
  stream.addEventListener('partial', (event) => {
    const update: { streamId: string; text: string; done: boolean } = JSON.parse(event.data);
    const base =
      state.partial?.streamId === update.streamId ? state.partial.base : (state.view?.transcript.length ?? 0);
    state.partial = { ...update, base };
    render();
  });
  stream.addEventListener('unavailable', (event) => showBanner(JSON.parse(event.data).message));
  stream.addEventListener('not-found', () => showBanner('Say something to start this conversation.'));
  state.stream = stream;
  void loadSessions();
}

async function loadSessions() {
  try {
    const { sessions } = await api('/sessions');
    $('sessions').replaceChildren(
      ...(sessions as SessionSummary[]).map((s) =>
        el(
          'a',
          {
            href: `#${s.sessionId}`,
            class: s.sessionId === state.sessionId ? 'active' : '',
            dataset: { testid: 'session-link' },
            onclick: (e) => {
              e.preventDefault();
              openSession(s.sessionId);
            },
          },
          `${s.sessionId.slice(0, 8)} `,
          el('small', {}, `@${s.ownerId || '?'} · ${(s.status || '').replace('_', ' ')}`),
        ),
      ),
    );
  } catch (error) {
    showBanner(messageOf(error));
  }
}

async function loadGrants() {
  try {
    const { grants } = await api(`/grants${state.sessionId ? `?sessionId=${state.sessionId}` : ''}`);
    $('grants').replaceChildren(
      ...(grants.length
        ? (grants as Grant[]).map((g) =>
            el(
              'li',
              { dataset: { testid: 'grant' } },
              el(
                'span',
                {},
                `${g.toolName}${g.pattern ? ` “${g.pattern}”` : ''} · ${g.scope === 'user' ? 'everywhere' : 'this conversation'}`,
              ),
              el(
                'button',
                {
                  dataset: { testid: 'revoke' },
                  onclick: async () => {
                    await api('/grants/revoke', {
                      method: 'POST',
                      body: JSON.stringify({
                        grantId: g.id,
                        scope: g.scope,
                        ...(g.scope === 'session' ? { sessionId: state.sessionId } : {}),
                      }),
                    }).catch((e) => showBanner(e.message));
                    setTimeout(loadGrants, 500);
                  },
                },
                'Revoke',
              ),
            ),
          )
        : [el('li', {}, 'none')]),
    );
  } catch {
    // grants need a worker; the banner already says so
  }
}

async function newSession() {
  const { sessionId } = await api('/sessions', { method: 'POST' });
  openSession(sessionId);
}

/**
 * A message whose sending failed keeps its id: sent again unchanged, it is the same message, so one that did
 * arrive despite the error (a server that answered too late) is taken once, not twice.
 */
let unsent: { text: string; messageId: string } | undefined;

$('composer').addEventListener('submit', async (event) => {
  event.preventDefault();
  const text = $<HTMLTextAreaElement>('text').value.trim();
  if (!text) return;
  if (!state.sessionId) await newSession();
  const messageId = unsent?.text === text ? unsent.messageId : crypto.randomUUID();
  unsent = { text, messageId };
  try {
    await api(`/sessions/${state.sessionId}/messages`, {
      method: 'POST',
      body: JSON.stringify({ text, messageId }),
    });
    unsent = undefined;
    $<HTMLTextAreaElement>('text').value = '';
    setTimeout(loadSessions, 800);
  } catch (error) {
    showBanner(messageOf(error));
  }
});
$('text').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $<HTMLFormElement>('composer').requestSubmit();
  }
});
$('new-session').addEventListener('click', () => newSession());

async function start() {
  let me: { userId: string; mode: string };
  try {
    me = await api('/me');
  } catch {
    return; // showSignIn has said what to do
  }
  state.user = me.userId;
  // replaceChildren would show a null as the text "null": only real nodes go in.
  $('who').replaceChildren(
    ...[
      el('span', { dataset: { testid: 'signed-in-as' } }, `Signed in as @${me.userId}`),
      me.mode === 'login'
        ? el('button', { class: 'link', onclick: signOut, dataset: { testid: 'sign-out' } }, 'Sign out')
        : null,
    ].filter((node): node is HTMLElement => node !== null),
  );
  if (location.hash.length > 1) openSession(location.hash.slice(1));
  else void loadSessions();
  void loadGrants();
}
void start();

/**
 * Gates as a person meets them: an approval (approve, deny with a reason, always allow, edit & approve), a
 * question form, a Connect link, a budget question. Each shows the workflow's rule in its words (`gate.rule`) and
 * sends the person's choice; the workflow decides whether it counts and says so.
 */
import { createContext } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { isProtected } from '../../../common/gates/deciders';
import {
  approvalProgress,
  isBudgetGate,
  typedAnswerHint,
  typedDecisionHint,
} from '../../../common/gates/words';
import { DecisionButtons } from './decision-buttons';
import { outcomeLine, time } from './format';
import type { Answer, ApprovalGate, CredentialGate, QuestionGate, WebGate } from './types';

export interface GateActions {
  decide(gate: WebGate, choice: string, extra?: Record<string, unknown>): Promise<void>;
  answer(gate: QuestionGate, answers: Answer[]): Promise<void>;
  /** Shown next to the gate, in the person's words. */
  problem(text: string): void;
  /** A conversation of another channel, read on the web: its gates are decided in "Needs you". */
  readOnly?: boolean;
}
export const GateActionsContext = createContext<GateActions | null>(null);
const useActions = () => useContext(GateActionsContext)!;

const pending = (gate: WebGate) => gate.status === 'pending';

function Outcome({ gate }: { gate: WebGate }) {
  const actions = useActions();
  return (
    <>
      {gate.typed?.map((reply) => (
        <div class="typed-reply" data-testid="typed-reply" key={`${reply.at}:${reply.by}`}>
          <span class="meta">{`@${reply.by} typed · ${time(reply.at)}`}</span> {reply.text}
        </div>
      ))}
      <div class="outcome" data-testid="gate-outcome">
        {pending(gate) && gate.rule ? gate.rule : outcomeLine(gate)}
      </div>
      {pending(gate) && actions.readOnly && (
        <div class="hint">
          Decide it in <a href="#/inbox">Needs you</a>, or where it was asked.
        </div>
      )}
    </>
  );
}

/** Whether this person acts on the gate here (not in a conversation read from another channel). */
const actsHere = (gate: WebGate, actions: GateActions) => pending(gate) && !actions.readOnly;

function Progress({ gate }: { gate: ApprovalGate }) {
  const progress = approvalProgress(gate);
  if (!progress) return null;
  return (
    <div class="meta" data-testid="gate-approvals">
      {progress}
    </div>
  );
}

/** Typing works too: the same replies as in Slack and Discord, said on the card. */
const TYPED_DECISION_HINT = typedDecisionHint((text) => `"${text}"`);

export function ApprovalGateCard({ gate }: { gate: ApprovalGate }) {
  const actions = useActions();
  const [scope, setScope] = useState<'session' | 'user'>('session');
  const [pattern, setPattern] = useState(gate.subject);
  const needed = gate.approvalsNeeded ?? 1;
  // Four-eyes and quorum: no Always allow (a grant would skip them), and under a quorum no Edit.
  const guarded = isProtected(gate);
  return (
    <div
      class={`gate ${pending(gate) ? 'pending' : 'decided'}`}
      data-testid="gate"
      data-gate-id={gate.id}
      data-status={gate.status}
    >
      <Outcome gate={gate} />
      <Progress gate={gate} />
      {actsHere(gate, actions) && (
        <>
          {gate.expiresAt && <div class="meta">Expires {new Date(gate.expiresAt).toLocaleString()}</div>}
          <DecisionButtons
            budget={false}
            ids={{ approve: 'approve', deny: 'deny', reason: 'deny-reason' }}
            onDecide={(choice, reason) => actions.decide(gate, choice, reason ? { reason } : {})}
          />
          <div class="actions" hidden={guarded}>
            <button
              type="button"
              data-testid="always"
              onClick={() =>
                actions.decide(gate, 'always', {
                  scope,
                  ...(pattern.trim() ? { pattern: pattern.trim() } : {}),
                })
              }
            >
              Always allow
            </button>
            <select
              aria-label="Where to always allow"
              data-testid="grant-scope"
              value={scope}
              onChange={(e) => setScope(e.currentTarget.value === 'user' ? 'user' : 'session')}
            >
              <option value="session">in this conversation</option>
              <option value="user">everywhere for me</option>
            </select>
            <label class="inline">
              matching{' '}
              <input
                value={pattern}
                size={18}
                title="Pattern: * matches anything; empty means exactly this call"
                data-testid="grant-pattern"
                onInput={(e) => setPattern(e.currentTarget.value)}
              />
            </label>
          </div>
          {needed <= 1 && (
            <EditAndApprove
              args={gate.args}
              problem={actions.problem}
              submit={(args) => actions.decide(gate, 'edit', { args })}
            />
          )}
          <div class="hint">{TYPED_DECISION_HINT}</div>
        </>
      )}
    </div>
  );
}

/** "Edit & approve…": the arguments as JSON, approved as edited (refused here only when not JSON). */
export function EditAndApprove({
  args: initial,
  submit,
  problem,
}: {
  args: unknown;
  submit: (args: Record<string, unknown>) => Promise<void> | void;
  problem: (text: string) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [args, setArgs] = useState(() => JSON.stringify(initial, null, 2));
  return (
    <>
      <div class="actions">
        <button type="button" data-testid="edit" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit &amp; approve…
        </button>
      </div>
      <div class="actions" hidden={!editing}>
        <textarea
          aria-label="The arguments to approve (JSON)"
          rows={4}
          data-testid="edit-args"
          value={args}
          onInput={(e) => setArgs(e.currentTarget.value)}
        />
        <button
          type="button"
          data-testid="edit-submit"
          onClick={() => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(args);
            } catch (error) {
              return problem(`The arguments are not valid JSON: ${(error as Error).message}`);
            }
            if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
              return problem('The arguments must be a JSON object, like {"command": "ls"}.');
            void submit(parsed as Record<string, unknown>);
          }}
        >
          Approve with these arguments
        </button>
      </div>
    </>
  );
}

type Draft = Record<string, { selected: string[]; custom: string }>;
type Question = QuestionGate['questions'][number];

/** A question's form: options, "Other" where allowed, Submit; the workflow checks the answers (here or in the inbox). */
export function QuestionForm({
  formId,
  questions,
  submit,
}: {
  /** Unique on the page: names the radio groups. */
  formId: string;
  questions: Question[];
  submit: (answers: Answer[]) => void;
}) {
  const [draft, setDraft] = useState<Draft>(() =>
    Object.fromEntries(questions.map((q) => [q.label, { selected: [], custom: '' }])),
  );
  const update = (label: string, change: Partial<Draft[string]>) =>
    setDraft((d) => ({ ...d, [label]: { ...d[label]!, ...change } }));
  return (
    <>
      {questions.map((q, qi) => {
        const answer = draft[q.label] ?? { selected: [], custom: '' };
        return (
          <fieldset data-testid="question" data-label={q.label} key={q.label}>
            <legend>{`${questions.length > 1 ? `${qi + 1}. ` : ''}${q.label}${q.required ? ' *' : ''}`}</legend>
            <div>{q.prompt}</div>
            {q.options.map((option) => (
              <label class="option" key={option.label}>
                <input
                  type={q.multi_select ? 'checkbox' : 'radio'}
                  name={`${formId}-${qi}`}
                  value={option.label}
                  checked={answer.selected.includes(option.label)}
                  data-testid="option"
                  onChange={(e) =>
                    update(
                      q.label,
                      q.multi_select
                        ? {
                            selected: e.currentTarget.checked
                              ? [...answer.selected, option.label]
                              : answer.selected.filter((l) => l !== option.label),
                          }
                        : { selected: [option.label], custom: '' },
                    )
                  }
                />{' '}
                {option.label}
                {option.description && <small> — {option.description}</small>}
              </label>
            ))}
            {q.allow_custom && (
              <label class="option">
                Other:{' '}
                <input
                  value={answer.custom}
                  maxLength={2000}
                  data-testid="custom"
                  onInput={(e) =>
                    update(q.label, {
                      custom: e.currentTarget.value,
                      ...(!q.multi_select && e.currentTarget.value ? { selected: [] } : {}),
                    })
                  }
                />
              </label>
            )}
          </fieldset>
        );
      })}
      <div class="actions">
        <button
          type="button"
          class="approve"
          data-testid="submit-answers"
          onClick={() =>
            submit(
              questions.map((q) => {
                const { selected, custom } = draft[q.label] ?? { selected: [], custom: '' };
                return { question: q.label, selected, ...(custom.trim() ? { custom: custom.trim() } : {}) };
              }),
            )
          }
        >
          Submit
        </button>
      </div>
    </>
  );
}

/** A tool server asking in the middle of a call (MCP elicitation): which server, for which tool, in its words. */
function ServerAsks({ gate }: { gate: QuestionGate }) {
  if (!gate.asks) return null;
  const part = gate.asks.part ? ` (part ${gate.asks.part[0]} of ${gate.asks.part[1]})` : '';
  return (
    <div class="server-asks" data-testid="server-asks">
      <div class="meta">{`The "${gate.asks.server}" tool server asks, for ${gate.toolName}${part}:`}</div>
      {gate.asks.message && <div class="server-message">{gate.asks.message}</div>}
      <div class="meta">
        Your answer goes to the server, and the call is made again from the start with it.
      </div>
      {gate.asks.url && (
        <div>
          <a href={gate.asks.url} target="_blank" rel="noopener noreferrer">
            {gate.asks.url}
          </a>
        </div>
      )}
    </div>
  );
}

export function QuestionGateCard({ gate }: { gate: QuestionGate }) {
  const actions = useActions();
  const box = `gate question ${pending(gate) ? 'pending' : 'decided'}`;
  if (!actsHere(gate, actions))
    return (
      <div class={box} data-testid="question-gate" data-gate-id={gate.id} data-status={gate.status}>
        <ServerAsks gate={gate} />
        <Outcome gate={gate} />
        {(gate.resolution?.answers ?? []).map((answer) => (
          <div data-testid="answer" key={answer.question}>
            <strong>{answer.question}: </strong>
            {[...answer.selected, ...(answer.custom ? [`“${answer.custom}”`] : [])].join(', ') ||
              '(no answer)'}
          </div>
        ))}
      </div>
    );
  return (
    <div class={box} data-testid="question-gate" data-gate-id={gate.id} data-status={gate.status}>
      <ServerAsks gate={gate} />
      <Outcome gate={gate} />
      <QuestionForm
        formId={gate.id}
        questions={gate.questions}
        submit={(answers) => actions.answer(gate, answers)}
      />
      {gate.asks && (
        <div class="actions">
          <button
            type="button"
            class="deny"
            data-testid="decline"
            onClick={() => actions.decide(gate, 'deny')}
          >
            Decline
          </button>
        </div>
      )}
      <div class="hint" data-testid="typed-answer-hint">
        {`${typedAnswerHint(gate.questions)}.`}
      </div>
    </div>
  );
}

export function CredentialGateCard({ gate }: { gate: CredentialGate & { connectUrl?: string } }) {
  const actions = useActions();
  return (
    <div
      class={`gate ${pending(gate) ? 'pending' : 'decided'}`}
      data-testid="gate"
      data-gate-id={gate.id}
      data-status={gate.status}
    >
      <Outcome gate={gate} />
      {pending(gate) && gate.note && (
        <div class="gate-note" data-testid="gate-note">
          {gate.note}
        </div>
      )}
      {actsHere(gate, actions) && gate.connectUrl && (
        <a class="button connect" href={gate.connectUrl} target="_blank" rel="noopener" data-testid="connect">
          Connect {gate.providerName}
        </a>
      )}
    </div>
  );
}

/** "This conversation has used $4.80 of $5.00. Continue with $5.00 more?" and Continue / Stop. */
export function BudgetGateCard({ gate }: { gate: ApprovalGate }) {
  const actions = useActions();
  return (
    <section
      class={`call gate ${pending(gate) ? 'pending' : 'decided'}`}
      data-testid="budget-gate"
      data-gate-id={gate.id}
      data-status={gate.status}
      aria-label="Budget"
    >
      <h3>Budget</h3>
      <div data-testid="budget-question">{gate.subject}</div>
      <Outcome gate={gate} />
      {actsHere(gate, actions) && (
        <DecisionButtons
          budget
          ids={{ approve: 'budget-continue', deny: 'budget-stop' }}
          onDecide={(choice) => actions.decide(gate, choice)}
        />
      )}
    </section>
  );
}

export function GateCard({ gate }: { gate: WebGate }) {
  if (gate.kind === 'question') return <QuestionGateCard gate={gate} />;
  if (gate.kind === 'credential') return <CredentialGateCard gate={gate} />;
  if (isBudgetGate(gate)) return <BudgetGateCard gate={gate} />;
  return <ApprovalGateCard gate={gate} />;
}

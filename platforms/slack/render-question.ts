/**
 * ask_user in Slack: the answer form is a modal (input blocks do not fit a thread message): radio buttons
 * for one choice, checkboxes for several (selects beyond ten options), a text input for "Other".
 */
import type { InputBlock, View } from '@slack/types';
import { validateAnswers, type Answer, type Question } from '../../common/tools/ask-user';
import { gateModal } from './render';

const option = (label: string, description?: string) => ({
  text: { type: 'plain_text' as const, text: label },
  value: label,
  ...(description ? { description: { type: 'plain_text' as const, text: description.slice(0, 75) } } : {}),
});

/** Built from the questions alone (the gate's memo), so it opens while no worker runs. */
export function answerModal(privateMetadata: string, gate: { questions: readonly Question[] }): View {
  const blocks: InputBlock[] = [];
  for (const q of gate.questions) {
    if (q.options.length) {
      const options = q.options.map((o) => option(o.label, o.description));
      const many = options.length > 10;
      const element = q.multi_select
        ? many
          ? { type: 'multi_static_select' as const, action_id: 'value', options }
          : { type: 'checkboxes' as const, action_id: 'value', options }
        : many
          ? { type: 'static_select' as const, action_id: 'value', options }
          : { type: 'radio_buttons' as const, action_id: 'value', options };
      blocks.push({
        type: 'input',
        block_id: `q:${q.label}`,
        optional: !q.required || q.allow_custom,
        label: { type: 'plain_text', text: q.prompt.slice(0, 2000) },
        element,
      });
    }
    if (q.allow_custom) {
      blocks.push({
        type: 'input',
        block_id: `qc:${q.label}`,
        optional: q.options.length > 0 || !q.required,
        label: { type: 'plain_text', text: q.options.length ? `${q.label}: other` : q.prompt.slice(0, 2000) },
        element: { type: 'plain_text_input', action_id: 'value', max_length: 2000 },
      });
    }
  }
  return gateModal('gate_answer', privateMetadata, 'Answer', 'Submit', blocks);
}

type StateValue = {
  selected_option?: { value?: string } | null;
  selected_options?: { value?: string }[];
  value?: string | null;
};

/** Reads a submitted answer modal back into answers; the workflow validates them against the questions. */
export function readAnswers(values: Record<string, Record<string, StateValue>>): Answer[] {
  const byLabel = new Map<string, Answer>();
  for (const [blockId, actions] of Object.entries(values)) {
    const match = /^(q|qc):(.+)$/.exec(blockId);
    const state = actions.value;
    if (!match || !state) continue;
    const label = match[2]!;
    const answer = byLabel.get(label) ?? { question: label, selected: [] };
    if (match[1] === 'q') {
      answer.selected =
        state.selected_options?.flatMap((o) => (o.value ? [o.value] : [])) ??
        (state.selected_option?.value ? [state.selected_option.value] : []);
    } else if (state.value?.trim()) answer.custom = state.value.trim();
    byLabel.set(label, answer);
  }
  return [...byLabel.values()];
}

/** The block a question's error is shown under: its options, or its text field when it has none. */
const blockOf = (q: Question) => (q.options.length ? `q:${q.label}` : `qc:${q.label}`);

/**
 * Checks submitted answers against the questions before anything is signalled: Slack shows each reason
 * under its question and the modal (and the question) stays open. Empty when all is well.
 */
export function answerErrors(
  questions: readonly Question[],
  answers: readonly Answer[],
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const q of questions) {
    const checked = validateAnswers(
      [q],
      answers.filter((a) => a.question === q.label),
    );
    if (!checked.ok) errors[blockOf(q)] = checked.error.slice(0, 150);
  }
  return errors;
}

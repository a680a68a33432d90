import { describe, expect, it } from 'vitest';
import { parseSlackSessionId, slackSessionWorkflowId } from '../../platforms/slack/ids';
import {
  approvalBlocks,
  argsPreview,
  connectLinkBlocks,
  gateBlocks,
  decidedBlocks,
  questionBlocks,
  slackMentions,
  splitForSlack,
  toMrkdwn,
  SECTION_LIMIT,
} from '../../platforms/slack/render';
import { answerErrors, answerModal, readAnswers } from '../../platforms/slack/render-question';
import type { ApprovalGate, CredentialGate, QuestionGate } from '../../workflows/session/contract';

const workflowId = 'session:slack:T1:C1:1700000000.000100';
const gate: ApprovalGate = {
  id: 'g1',
  kind: 'approval',
  toolCallId: 'c1',
  toolName: 'shell_execute',
  args: { command: 'ls -la' },
  subject: 'ls -la',
  requesterId: 'U1',
  approvers: ['U9'],
  createdAt: 0,
  expiresAt: Date.UTC(2026, 10, 23, 9, 30),
  status: 'pending',
};

describe('Slack ids', () => {
  it('round-trips a thread through its workflow id', () => {
    const thread = { team: 'T1', channel: 'C1', threadTs: '1700000000.000100' };
    expect(slackSessionWorkflowId(thread)).toBe(workflowId);
    expect(parseSlackSessionId(workflowId)).toEqual(thread);
    expect(parseSlackSessionId('session:web:abc')).toBeUndefined();
  });
});

describe('Slack rendering', () => {
  it('builds an approval prompt with every decision and compact, addressable button values', () => {
    const blocks = approvalBlocks(gate, workflowId, 'opened');
    expect(blocks.length).toBeLessThanOrEqual(50);
    const actions = blocks.find((b) => b.type === 'actions') as {
      elements: { action_id: string; value: string; text: { text: string } }[];
    };
    expect(actions.elements.map((e) => e.action_id)).toEqual([
      'gate_approve',
      'gate_deny',
      'gate_always_session',
      'gate_always_user',
      'gate_edit',
    ]);
    for (const button of actions.elements) {
      expect(button.text.text.length).toBeLessThanOrEqual(75);
      expect(button.value.length).toBeLessThanOrEqual(2000);
      expect(JSON.parse(button.value)).toMatchObject({ workflowId, gateId: 'g1' });
    }
    const text = JSON.stringify(blocks);
    expect(text).toContain('requested by <@U1>');
    expect(text).toContain('<@U1>, <@U9>');
    expect(text).toContain('2026-11-23 09:30 UTC');
  });

  it('asks a budget question with only Continue and Stop, and no arguments to show', () => {
    const budget: ApprovalGate = {
      ...gate,
      toolCallId: 'budget:g1',
      toolName: 'budget',
      args: { scope: 'conversation', used: '$5.02 of $5.00', more: '$5.00' },
      subject: 'This conversation has used $5.02 of $5.00. Continue with $5.00 more?',
    };
    const blocks = approvalBlocks(budget, workflowId, 'opened');
    const actions = blocks.find((b) => b.type === 'actions') as {
      elements: { action_id: string; text: { text: string }; value: string }[];
    };
    expect(actions.elements.map((e) => [e.action_id, e.text.text, JSON.parse(e.value).choice])).toEqual([
      ['gate_approve', 'Continue', 'approve'],
      ['gate_deny', 'Stop…', 'deny'],
    ]);
    const text = JSON.stringify(blocks);
    expect(text).toContain(
      '*Budget reached*: This conversation has used $5.02 of $5.00. Continue with $5.00 more?',
    );
    expect(text).not.toContain('"scope"');
  });

  it('truncates a huge argument preview safely and says so', () => {
    const preview = argsPreview({ command: 'x'.repeat(10_000) });
    expect(preview.length).toBeLessThan(SECTION_LIMIT);
    expect(preview).toMatch(/more characters; Edit & approve shows them all/);
    expect(preview.startsWith('```') && preview.endsWith('```')).toBe(true);
  });

  it('shows the outcome without buttons once decided', () => {
    const decided = decidedBlocks(
      { ...gate, status: 'resolved', resolution: { outcome: 'denied', by: 'U9', at: 0, reason: 'frozen' } },
      'denied by @U9 at 00:00 UTC',
    );
    const text = JSON.stringify(decided);
    expect(text).toContain('denied by <@U9>');
    expect(text).toContain('Reason: frozen');
    expect(decided.some((b) => b.type === 'actions')).toBe(false);
  });

  it('converts Markdown to mrkdwn and mentions', () => {
    // slackify-markdown puts zero-width spaces around emphasis so Slack formats it next to other text.
    expect(toMrkdwn('**bold** and [docs](https://x.test)').replace(/\u200b/g, '')).toBe(
      '*bold* and <https://x.test|docs>',
    );
    expect(slackMentions('approved by @U123ABC')).toBe('approved by <@U123ABC>');
  });

  it('splits long text at line breaks into numbered parts, losing nothing', () => {
    const text = Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(20)}`).join('\n');
    const parts = splitForSlack(text);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(SECTION_LIMIT + 30);
    expect(parts[0]).toMatch(/_\(part 1 of \d+\)_$/);
    const rejoined = parts.map((p) => p.replace(/\n_\(part \d+ of \d+\)_$/, '')).join('\n');
    expect(rejoined).toBe(text);
  });
});

describe("Slack prompts of a mission run's gate", () => {
  it('name the mission above the prompt, reminders included', () => {
    const remote = { ...gate, remote: { workflowId: 'mission-run:m:1', missionName: 'nightly <cleanup>' } };
    for (const reason of ['opened', 'reminder'] as const) {
      const [first, ...rest] = gateBlocks(remote, workflowId, reason);
      expect(first).toEqual({
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `:repeat: From the mission *nightly &lt;cleanup&gt;*, acting as <@${gate.requesterId}>`,
          },
        ],
      });
      expect(rest).toEqual(approvalBlocks(gate, workflowId, reason));
    }
    expect(gateBlocks(gate, workflowId, 'opened')[0]).toEqual(approvalBlocks(gate, workflowId, 'opened')[0]);
  });
});

describe('Slack question modal', () => {
  const question: QuestionGate = {
    id: 'q1',
    kind: 'question',
    toolCallId: 'c2',
    toolName: 'ask_user',
    requesterId: 'U1',
    approvers: [],
    createdAt: 0,
    expiresAt: null,
    status: 'pending',
    questions: [
      {
        label: 'Environment',
        prompt: 'Where?',
        options: [{ label: 'staging' }, { label: 'production' }],
        multi_select: false,
        allow_custom: false,
        required: true,
      },
      {
        label: 'Checks',
        prompt: 'Which?',
        options: [{ label: 'lint' }, { label: 'tests' }],
        multi_select: true,
        allow_custom: true,
        required: false,
      },
    ],
  };

  const promptText = (gate: QuestionGate) =>
    (questionBlocks(gate, workflowId)[0] as { text: { text: string } }).text.text;

  it("numbers a single question's options and says a typed number answers it", () => {
    const single = { ...question, questions: [question.questions[0]!] };
    const text = promptText(single);
    expect(text).toContain('  1. staging');
    expect(text).toContain('  2. production');
    expect(text).toContain('Reply with a number.');
    expect(text).toContain('Type the reply in this thread');
    const several = { ...question, questions: [question.questions[1]!] };
    expect(promptText(several)).toContain('Reply with numbers, e.g. "1,3", or "other: your answer".');
  });

  it('numbers every question and its options, with the "1: 2; 2: 1,3" reply format', () => {
    const text = promptText(question);
    expect(text).toContain('*1. Environment*');
    expect(text).toContain('*2. Checks*');
    expect(text).toContain('e.g. "1: 1; 2: 1,2"');
  });

  it('asks a long question set in several sections, never cut, the reply hint last', () => {
    const long = {
      ...question,
      questions: Array.from({ length: 5 }, (_, i) => ({
        ...question.questions[0]!,
        label: `Q${i}`,
        prompt: `${i}`.repeat(1_000),
        options: Array.from({ length: 25 }, (_, j) => ({
          label: `option ${j}`,
          description: 'd'.repeat(200),
        })),
      })),
    };
    const blocks = questionBlocks(long, workflowId);
    const sections = blocks.filter((b) => b.type === 'section') as { text: { text: string } }[];
    expect(sections.length).toBeGreaterThan(1);
    for (const section of sections) expect(section.text.text.length).toBeLessThanOrEqual(3_000);
    const all = sections.map((s) => s.text.text).join('\n');
    for (let i = 0; i < 5; i++) expect(all).toContain(`${i}`.repeat(1_000));
    expect(sections.at(-1)!.text.text).toContain('Type the reply in this thread, or press Answer…');
    expect(blocks.at(-1)!.type).toBe('actions');
    expect(blocks.length).toBeLessThanOrEqual(50);
  });

  it('uses select menus for questions with more than ten options', () => {
    const options = Array.from({ length: 12 }, (_, i) => ({ label: `region-${i + 1}` }));
    const modal = answerModal('{}', {
      questions: [
        { ...question.questions[0]!, options },
        { ...question.questions[1]!, options, allow_custom: false },
      ],
    });
    const elements = modal.blocks.map((b) =>
      'element' in b ? (b.element as { type: string }).type : b.type,
    );
    expect(elements).toEqual(['static_select', 'multi_static_select']);
  });

  it('explains a bad submission under the question it concerns', () => {
    expect(
      answerErrors(question.questions, [
        { question: 'Environment', selected: ['staging', 'production'] },
        { question: 'Checks', selected: [] },
      ]),
    ).toEqual({ 'q:Environment': '"Environment" takes one choice' });
    expect(answerErrors(question.questions, [{ question: 'Checks', selected: [] }])).toEqual({
      'q:Environment': '"Environment" needs an answer',
    });
  });

  it('uses radio buttons for one choice, checkboxes for several, and a text input for "Other"', () => {
    const modal = answerModal('{}', question);
    const elements = modal.blocks.map((b) =>
      'element' in b ? (b.element as { type: string }).type : b.type,
    );
    expect(elements).toEqual(['radio_buttons', 'checkboxes', 'plain_text_input']);
  });

  it('reads the submitted state back into answers', () => {
    const answers = readAnswers({
      'q:Environment': { value: { selected_option: { value: 'staging' } } },
      'q:Checks': { value: { selected_options: [{ value: 'lint' }, { value: 'tests' }] } },
      'qc:Checks': { value: { value: ' smoke ' } },
    });
    expect(answers).toEqual([
      { question: 'Environment', selected: ['staging'] },
      { question: 'Checks', selected: ['lint', 'tests'], custom: 'smoke' },
    ]);
  });
});

describe('Slack credential prompts', () => {
  const credential: CredentialGate = {
    ...gate,
    kind: 'credential',
    toolName: 'http_request',
    provider: 'github',
    providerName: 'GitHub',
    credentialKind: 'oauth2',
    approvers: [],
  };

  it('posts a Connect button that carries only the provider, never a link or a secret', () => {
    const blocks = gateBlocks(credential, workflowId, 'opened');
    const text = JSON.stringify(blocks);
    expect(text).toContain("<@U1>'s GitHub account");
    const button = (blocks[1] as { elements: { action_id: string; value: string; url?: string }[] })
      .elements[0]!;
    expect(button).toMatchObject({ action_id: 'gate_connect', value: '{"provider":"github"}' });
    expect(button.url).toBeUndefined();
  });

  it('answers the clicker with a private link button, and shows the outcome once connected', () => {
    const reply = connectLinkBlocks('GitHub', 'https://agent.example.com/oauth/github/start?ticket=t');
    expect(JSON.stringify(reply)).toContain('"url":"https://agent.example.com/oauth/github/start?ticket=t"');
    const decided = decidedBlocks(
      { ...credential, status: 'resolved', resolution: { outcome: 'connected', by: 'U1', at: 0 } },
      'connected by @U1 at 00:00 UTC',
    );
    expect(JSON.stringify(decided)).toContain('GitHub sign-in for `http_request`: connected by <@U1>');
  });
});

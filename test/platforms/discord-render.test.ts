/** Discord's limits, checked on what we build: custom_id encoding, prompt layout, modals, command registration. */
import { describe, expect, it } from 'vitest';
import { registerCommands } from '../../platforms/discord/commands';
import { CUSTOM_ID_LIMIT, decodeCustomId, encodeCustomId, ACTIONS } from '../../platforms/discord/ids';
import { modalValues } from '../../platforms/discord/interactions';
import {
  approvalMessage,
  decidedMessage,
  gateMessage,
  gateMessageParts,
  splitForDiscord,
  MESSAGE_LIMIT,
} from '../../platforms/discord/render';
import { discordRest } from '../../platforms/discord/rest';
import type { ApprovalGate, QuestionGate } from '../../workflows/session/contract';
import { FakeDiscord } from '../helpers/fake-discord';

const CHANNEL = '12345678901234567890';
const GATE_ID = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
const base = {
  id: GATE_ID,
  toolCallId: 'call_1',
  requesterId: '100000000000000001',
  approvers: ['100000000000000003'],
  createdAt: 0,
  expiresAt: null,
  status: 'pending' as const,
};
const approval: ApprovalGate = {
  ...base,
  kind: 'approval',
  toolName: 'shell_execute',
  args: { command: 'x'.repeat(5_000) },
  subject: 'x',
};
const question = (count: number, extra: Partial<QuestionGate['questions'][number]> = {}): QuestionGate => ({
  ...base,
  kind: 'question',
  toolName: 'ask_user',
  questions: Array.from({ length: count }, (_, i) => ({
    label: `Question ${i}`,
    prompt: 'p'.repeat(300),
    options: Array.from({ length: 25 }, (_, j) => ({ label: `option ${j}`, description: 'd'.repeat(200) })),
    multi_select: i % 2 === 1,
    allow_custom: false,
    required: true,
    ...extra,
  })),
});

describe('Discord custom_id', () => {
  it('round-trips every action within 100 characters, with the longest ids', () => {
    for (const action of Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]) {
      const id = {
        action,
        channelId: CHANNEL,
        gateId: GATE_ID,
        ...(action === 'select' ? { question: 4 } : {}),
        ...(action === 'connect' ? { provider: 'a'.repeat(32) } : {}),
      };
      const encoded = encodeCustomId(id);
      expect(encoded.length).toBeLessThanOrEqual(CUSTOM_ID_LIMIT);
      expect(decodeCustomId(encoded)).toEqual(id);
    }
  });

  it('refuses anything that is not exactly ours', () => {
    for (const bad of [
      undefined,
      42,
      '',
      'ga',
      `zz:${CHANNEL}:${GATE_ID}`,
      `ga:123:${GATE_ID}`,
      `ga:${CHANNEL}:${GATE_ID}:1`, // only select menus carry a question index
      `qs:${CHANNEL}:${GATE_ID}`,
      `qs:${CHANNEL}:${GATE_ID}:9`,
      `cc:${CHANNEL}:${GATE_ID}`, // a Connect button names its provider
      `cc:${CHANNEL}:${GATE_ID}:Bad_Name`,
      `ga:${CHANNEL}:../../etc`,
      `ga:${CHANNEL}:${'a'.repeat(120)}`,
    ])
      expect(decodeCustomId(bad)).toBeUndefined();
  });
});

describe('Discord prompts', () => {
  it('keeps an approval prompt within the message limit and pings only the people concerned', () => {
    const message = approvalMessage(approval, CHANNEL, 'opened');
    expect(message.content!.length).toBeLessThanOrEqual(MESSAGE_LIMIT);
    expect(message.content).toContain('more characters');
    expect(message.allowed_mentions).toEqual({ parse: [], users: [base.requesterId, ...base.approvers] });
  });

  it('asks a budget question with only Continue and Stop', () => {
    const message = approvalMessage(
      {
        ...approval,
        toolName: 'budget',
        args: { scope: 'turn', used: '201,000 of 200,000 tokens', more: '200,000 tokens' },
        subject: 'This turn has used 201,000 of 200,000 tokens. Continue with 200,000 tokens more?',
      },
      CHANNEL,
      'opened',
    );
    expect(message.content).toMatch(
      /^\*\*Budget reached\*\*: This turn has used 201,000 of 200,000 tokens\./,
    );
    const buttons = (message.components![0] as { components: { label: string }[] }).components;
    expect(buttons.map((b) => b.label)).toEqual(['Continue', 'Stop…']);
  });

  it('posts a long question set in parts, never cut: every prompt and option, the buttons on the last part', () => {
    const gate = question(5, { prompt: 'q'.repeat(1_000) });
    const { leading, message } = gateMessageParts(gate, CHANNEL, 'opened');
    expect(leading.length).toBeGreaterThan(0);
    const parts = [...leading, message.content!];
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(2_000);
    const all = parts.join('\n');
    expect(all.split('q'.repeat(1_000)).length - 1).toBe(5);
    for (let j = 0; j < 25; j++) expect(all).toContain(`option ${j}`);
    expect(message.content).toContain('_Or pick an answer for each question below');
    expect(message.components).toHaveLength(5);
    // Short prompts stay one message.
    expect(
      gateMessageParts(question(1, { prompt: 'Where?', options: [{ label: 'a' }] }), CHANNEL, 'opened')
        .leading,
    ).toEqual([]);
  });

  it('gives at most four select menus plus a button row, each within Discord limits', () => {
    // The message with the components (a long set's text goes before it in parts).
    const message = gateMessage(question(5, { required: false }), CHANNEL, 'opened');
    const rows = message.components as {
      components: {
        type: number;
        placeholder?: string;
        options?: unknown[];
        max_values?: number;
        label?: string;
      }[];
    }[];
    expect(rows).toHaveLength(5);
    const selects = rows.flatMap((r) => r.components).filter((c) => c.type === 3);
    expect(selects).toHaveLength(4);
    for (const select of selects) {
      expect(select.placeholder!.length).toBeLessThanOrEqual(150);
      expect(select.options).toHaveLength(25);
    }
    expect(selects.map((s) => s.max_values)).toEqual([1, 25, 1, 25]);
    expect(rows[4]!.components.map((c) => c.label)).toEqual(['Answer in words…', 'Submit answers']);
    expect(message.content!.length).toBeLessThanOrEqual(MESSAGE_LIMIT);
  });

  it('shows the outcome without components once decided', () => {
    const decided = decidedMessage(
      {
        ...approval,
        status: 'resolved',
        resolution: { outcome: 'denied', by: base.requesterId, at: 0, reason: 'no' },
      },
      `denied by @${base.requesterId}`,
    );
    expect(decided.components).toEqual([]);
    expect(decided.content).toContain(`denied by <@${base.requesterId}>`);
    expect(decided.content).toContain('Reason: no');
  });

  it('splits long answers into messages Discord accepts', () => {
    const parts = splitForDiscord('line\n'.repeat(2_000));
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(MESSAGE_LIMIT);
  });

  it('reads modal values from labels and from legacy action rows', () => {
    const values = modalValues([
      { type: 18, component: { type: 4, custom_id: 'reason', value: 'because' } },
      { type: 1, components: [{ type: 4, custom_id: '0', value: 'staging' }] },
    ]);
    expect(Object.fromEntries(values)).toEqual({ reason: 'because', '0': 'staging' });
  });
});

describe("Discord prompts of a mission run's gate", () => {
  it('name the mission on the first line, reminders included, within the limit', () => {
    const remote = { ...approval, remote: { workflowId: 'mission-run:m:1', missionName: 'nightly_cleanup' } };
    const reminder = gateMessage(remote, CHANNEL, 'reminder');
    // And whom its run acts as, by mention (the owner, whose approvals and accounts it uses).
    expect(reminder.content!.split('\n')[0]).toBe(
      `🔁 From the mission **nightly\\_cleanup**, acting as <@${approval.requesterId}>`,
    );
    expect(reminder.content).toContain('Still waiting');
    expect(reminder.components).toEqual(approvalMessage(approval, CHANNEL, 'reminder').components);
    expect(reminder.content!.length).toBeLessThanOrEqual(MESSAGE_LIMIT);
    expect(gateMessage(approval, CHANNEL, 'opened').content).not.toContain('From the mission');
  });
});

describe('npm run discord:register', () => {
  it('puts the /agent command with ask, pending and stop, globally or in one guild', async () => {
    const discord = await new FakeDiscord().start();
    try {
      const rest = discordRest({ botToken: 'discord-bot-token-for-tests', apiUrl: discord.url });
      expect(await registerCommands(rest, '1000000000000000001')).toBe(1);
      expect(await registerCommands(rest, '1000000000000000001', '1000000000000000002')).toBe(1);
      const [global, guild] = discord.of('PUT', /commands$/);
      expect(global!.path).toBe('/applications/1000000000000000001/commands');
      expect(guild!.path).toBe('/applications/1000000000000000001/guilds/1000000000000000002/commands');
      const [command] = global!.body as { name: string; options: { name: string }[] }[];
      expect(command!.name).toBe('agent');
      expect(command!.options.map((o) => o.name)).toEqual(['ask', 'pending', 'stop']);
    } finally {
      await discord.stop();
    }
  });
});

/**
 * Security: every MCP entry of the policy file applies or is refused. A deny written at the top level
 * (`"tools": {"notes__read_note": …}`) applies like one under the server; a per-tool entry naming a tool the server
 * does not offer (a misspelled deny) makes the server unavailable with the name to fix, instead of letting the
 * read-only tool it meant run without asking; an entry naming no tool at all stops the worker at start. A real stdio
 * MCP server (the official SDK), a real worker and Temporal server; a tool that runs is lost.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAsk } from '../../activities/mcp/elicitation';
import { fieldQuestion } from '../../common/tools/elicitation';
import { loadConfig } from '../../infra/config';
import { questionMessage } from '../../platforms/discord/render';
import { questionBlocks } from '../../platforms/slack/render';
import { openQuestionGate } from '../../workflows/session/gates';
import type { SessionView } from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { testEnv } from '../helpers/config';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';
import { pidsWith } from '../helpers/processes';
import { until } from '../helpers/until';
import { mcpFixture, serverDir } from '../helpers/mcp-fixtures';

const notes = (dir: string) => ({
  command: 'node',
  args: [mcpFixture('mcp-notes-server.mjs'), dir],
});
const toolResults = (v: SessionView) => v.transcript.filter((m) => m.role === 'tool');

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('MCP policy entries', () => {
  it('applies a top-level deny and refuses a server whose per-tool entry names no tool it offers', async () => {
    const tally = new Tally();
    const dir = serverDir('mcp-policy-');
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        // Denied at the top level: never runs, whatever the server's annotations say (read_note is read-only).
        await s.say('call notes__read_note {"name": "todo"}');
        const denied = await s.idle();
        const first = toolResults(denied)[0];
        tally.attempt(
          first?.role === 'tool' && first.status === 'denied',
          () => `the top-level deny did not apply: ${JSON.stringify(first)}`,
        );
        // The misspelled deny ("read_nte"): the server is refused, with the name to fix; read_note never runs.
        await s.say('call strict__read_note {"name": "todo"}');
        const refused = await s.idle();
        const second = toolResults(refused)[1];
        tally.attempt(
          second?.role === 'tool' && second.status !== 'ok',
          () => `a tool ran under a misspelled deny: ${JSON.stringify(second)}`,
        );
        const said = JSON.stringify(refused.notices) + JSON.stringify(second);
        tally.check(said.includes('read_nte'), () => `the misspelling is not named: ${said.slice(0, 500)}`);
        // The same server with the entry spelled right works as configured.
        await s.say('call fixed__read_note {"name": "todo"}');
        const fixed = await s.waitFor(
          (v) => v.gates.some((g) => g.status === 'pending' && g.toolName === 'fixed__read_note'),
          'the fixed server asking, as its entry says',
        );
        expect(fixed.gates.at(-1)).toMatchObject({ toolName: 'fixed__read_note' });
      },
      {
        tools: { notes__read_note: { policy: 'deny' } },
        mcpServers: {
          notes: notes(dir),
          strict: { ...notes(dir), tools: { read_nte: { policy: 'deny' } } },
          fixed: { ...notes(dir), tools: { read_note: { policy: 'ask' } } },
        },
      },
    );
    tally.finish('mcp: every policy entry applies or is refused');
  });

  it("lets only the person whose call it is answer a tool server's question, and shows the server's words as text", async () => {
    const tally = new Tally();
    const dir = serverDir('mcp-asks-');
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        await s.say('call booking__book_table {"restaurant": "Guarded"}');
        const question = await s.pendingQuestion();
        const answers = [
          { question: 'Name', selected: [], custom: 'Mallory' },
          { question: 'Guests', selected: [], custom: '12' },
          { question: 'Time', selected: ['Six'] },
        ];
        // A configured approver and a stranger try to answer for alice, or to decline her call's question.
        for (const who of ['bob', 'mallory']) {
          await s.answer(question.id, answers, who);
          await s.decide({ gateId: question.id, choice: 'deny', userId: who });
        }
        const after = await s.waitFor(
          (v) => v.notices.filter((n) => n.to === 'mallory' || n.to === 'bob').length >= 4,
          'the four refusals',
        );
        for (const who of ['bob', 'mallory'])
          for (const attempt of ['answer', 'decline'])
            tally.attempt(
              after.notices.filter((n) => n.to === who && /may not answer this question/.test(n.text))
                .length >= 2 && after.gates.find((g) => g.id === question.id)?.status === 'pending',
              () => `@${who}'s ${attempt} was not refused: ${JSON.stringify(after.notices)}`,
            );
        await s.answer(question.id, [{ ...answers[0]!, custom: 'Alice' }, ...answers.slice(1)]);
        const done = await s.idle();
        const booked = readFileSync(path.join(dir, 'bookings.txt'), 'utf8');
        tally.attempt(booked === 'Guarded|Alice|12|18:00|false\n', () => `booked: ${booked}`);
        expect(toolResults(done).at(-1)?.content).toContain('@alice answered');

        // A call others had to approve (four-eyes): its server's question is not put to the requester alone.
        await s.say('call guarded__book_table {"restaurant": "Four Eyes"}');
        const [approval] = await s.pendingGate();
        await s.decide({ gateId: approval!.id, choice: 'approve', userId: 'bob' });
        const guarded = await s.waitFor(
          (v) => v.status === 'idle' && toolResults(v).length === 2,
          'the four-eyes call ended',
        );
        const result = toolResults(guarded).at(-1)!;
        tally.attempt(
          result.content.includes('not booked: decline') &&
            result.content.includes('approved by others') &&
            !guarded.gates.some((g) => g.kind === 'question' && g.toolName === 'guarded__book_table'),
          () => `the requester alone completed a call others approved: ${JSON.stringify(result)}`,
        );
      },
      {
        approvers: ['bob'],
        tools: { guarded__book_table: { selfApprove: false } },
        mcpServers: {
          booking: {
            command: 'node',
            args: [mcpFixture('mcp-asking-server.mjs'), dir],
            policy: 'auto',
          },
          guarded: {
            command: 'node',
            args: [mcpFixture('mcp-asking-server.mjs'), serverDir('mcp-guarded-')],
            policy: 'ask',
          },
        },
      },
    );
    // The server's words are text in Slack: no channel-wide ping, mention or link of its own.
    const gate = openQuestionGate({
      id: 'g1',
      toolCallId: 'c1',
      toolName: 'evil__ask',
      questions: [fieldQuestion({ key: 'x', label: 'X', kind: 'text', required: true }, undefined)],
      requesterId: 'U1',
      approvers: [],
      now: 0,
      timeoutMs: 'never',
    });
    const markup = '<!channel> <https://evil.example|https://sso.corp> <@U2>';
    gate.asks = { server: 'evil', message: markup, fields: [] };
    // Every text the server wrote: its message, a field's title and description, an option's title.
    gate.questions = [
      {
        label: '<!here>',
        prompt: markup,
        options: [{ label: '<!channel>' }],
        multi_select: false,
        allow_custom: true,
        required: true,
      },
    ];
    const slackShown = JSON.stringify(questionBlocks(gate, 'w'));
    tally.attempt(
      !/<!channel>|<!here>|<https:|<@U2>/.test(slackShown) && slackShown.includes('&lt;!channel&gt;'),
      () => `the server's text was not escaped in Slack: ${slackShown}`,
    );
    const discordShown = questionMessage(
      {
        ...gate,
        questions: [{ ...gate.questions[0]!, prompt: '[https://sso.corp](https://evil.example) @everyone' }],
      },
      '1',
      'opened',
    ).content!;
    tally.attempt(
      !discordShown.includes('[https://sso.corp](https://evil.example)') &&
        discordShown.includes('\\@everyone'),
      () => `the server's text was not escaped in Discord: ${discordShown}`,
    );
    // A link in URL mode is offered only when it is a plain http(s) URL a browser opens as a page.
    for (const url of [
      'javascript:alert(1)',
      'https://evil.example/a b',
      'https://x.example/<!channel>',
      'https://x.example|y',
    ])
      tally.attempt(
        'refused' in toAsk('evil', { mode: 'url', message: 'm', url }),
        () => `the link ${url} was offered`,
      );
    // What reaches history is bounded whatever the server sends.
    const huge = {
      message: 'x'.repeat(100_000),
      requestedSchema: {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 15 }, (_, i) => [
            `f${i}`,
            { type: 'string', enum: Array.from({ length: 500 }, () => 'é'.repeat(500)) },
          ]),
        ),
      },
    };
    const bounded = toAsk('evil', huge);
    tally.attempt(
      'refused' in bounded || Buffer.byteLength(JSON.stringify(bounded)) <= 32_000,
      () => `an ask of ${Buffer.byteLength(JSON.stringify(bounded))} bytes went into history`,
    );
    tally.finish('mcp-asks: only the person whose call it is answers');
  });

  it("asks for a tool the server calls read-only unless the operator trusts the server's annotations", async () => {
    const dir = serverDir('mcp-annotations-');
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        await s.say('call notes__read_note {"name": "todo"}');
        const [gate] = await s.pendingGate();
        expect(gate).toMatchObject({ toolName: 'notes__read_note' });
        await s.decide({ gateId: gate!.id, choice: 'deny' });
        await s.idle();
        await s.say('call trusted__read_note {"name": "todo"}');
        const ran = await s.idle();
        expect(toolResults(ran).at(-1)).toMatchObject({ name: 'trusted__read_note' });
        expect(ran.gates.filter((g) => g.toolName === 'trusted__read_note')).toHaveLength(0);
      },
      { mcpServers: { notes: notes(dir), trusted: { ...notes(dir), trustAnnotations: true } } },
    );
  });

  it('connects again to a stdio server that died, runs the call once, and says why a server would not start', async () => {
    const dir = serverDir('mcp-dead-');
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        await s.say('call notes__write_note {"name": "log", "text": "one"}');
        await s.decide({ gateId: (await s.pendingGate())[0]!.id, choice: 'approve' });
        await s.idle();
        // The server process dies between calls (killed, crashed, OOM).
        for (const pid of pidsWith(`${dir}\0`)) process.kill(pid, 'SIGKILL');
        await until('the server gone', () => pidsWith(`${dir}\0`).length === 0, { timeoutMs: 5_000 });
        await s.say('call notes__write_note {"name": "log", "text": "two"}');
        await s.decide({ gateId: (await s.pendingGate())[0]!.id, choice: 'approve' });
        const after = await s.idle();
        expect(toolResults(after).at(-1)).toMatchObject({ status: 'ok', content: 'wrote to log' });
        expect(readFileSync(path.join(dir, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
        // A server that cannot start says why, in its own words, where people see it.
        await s.say('call broken__anything {}');
        const broken = await s.idle();
        expect(JSON.stringify(broken.notices) + JSON.stringify(toolResults(broken).at(-1))).toContain(
          'None of the specified directories are accessible',
        );
      },
      {
        mcpServers: {
          notes: notes(dir),
          broken: {
            command: 'node',
            args: [
              '-e',
              "console.error('Error: None of the specified directories are accessible'); process.exit(1)",
            ],
          },
        },
      },
    );
  });

  it('stops the worker at start on a tools entry that names no tool, or an MCP server that is not configured', () => {
    for (const [tools, named] of [
      [{ shell_exec: { policy: 'deny' } }, 'shell_exec names no tool'],
      [{ files__read: { policy: 'deny' } }, 'names the MCP server "files"'],
    ] as const) {
      const loaded = () => loadConfig(testEnv({ tools }));
      expect(loaded).toThrow(named);
    }
  });
});

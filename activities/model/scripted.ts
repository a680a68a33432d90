/**
 * `scripted`: the default demo model. Deterministic, no network: phrases in the user's message map to tool
 * calls (the README lists them), and tool results are summarised, so every gate can be tried without a key.
 */
import type { Message, ToolCall } from '../../workflows/session/contract';
import type { ModelReply } from '../types';
import { SUMMARY_INSTRUCTION } from './summarize';

const HELP =
  'I am the scripted demo model. Try: "run `ls -la`" (shell, needs approval), "run `echo a` and `echo b`" ' +
  '(two approvals), "ask me" (a form with two questions), "ask one" (one question; a typed "1" answers it), "fetch https://example.com" (GET, runs at once), "fetch <url> with <provider>" (a sign-in provider of your policy file: asks you to connect first), "post https://example.com hello" (needs approval), ' +
  '"what time is it" or "time in Asia/Tokyo", "loop" (shows the step limit), "fail loop" (the same failing call until the agent stops itself), "bad arguments" (shows validation), ' +
  '"call <tool> <JSON arguments>" (any tool, e.g. call mission_create {"name": "standup", "goal": "what time is it", "cadence": "0 9 * * 1-5"}).';

/** The longest a scripted answer takes to write out: long ones go several words at a time. */
const MAX_WRITING_MS = 3_000;

/**
 * Writes `text` out through `onText` word by word (a snapshot of everything so far each time), `wordMs` apart, as a
 * real model streams; stops when `signal` aborts (the person pressed Stop, or the call was cancelled).
 */
export async function writeOut(
  text: string,
  onText: (snapshot: string) => void,
  wordMs: number,
  signal?: AbortSignal,
): Promise<void> {
  if (wordMs <= 0) return;
  const words = text.match(/\S+\s*/g) ?? [];
  const perStep = Math.max(1, Math.ceil((words.length * wordMs) / MAX_WRITING_MS));
  let written = '';
  for (let i = 0; i < words.length; i += perStep) {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    written += words.slice(i, i + perStep).join('');
    onText(written);
    await new Promise((resolve) => setTimeout(resolve, wordMs));
  }
}

export function scriptedModel(transcript: Message[]): ModelReply {
  const lastUserIndex = transcript.findLastIndex((m) => m.role === 'user');
  const lastUser = transcript[lastUserIndex];
  if (!lastUser || lastUser.role !== 'user') return { text: HELP, toolCalls: [] };
  // Notes the runtime appended (a mission's report, a stop notice) are not part of the exchange being answered.
  const last =
    transcript.findLast((m) => !(m.role === 'assistant' && m.synthetic)) ??
    transcript[transcript.length - 1]!;
  // Unique across the conversation even when the request is only its recent part (context-window.ts).
  const callId = (n: number) => `call_${lastUser.id}_${transcript.length - lastUserIndex}_${n}`;
  if (lastUser.text.startsWith(SUMMARY_INSTRUCTION))
    return { text: scriptedSummary(lastUser.text), toolCalls: [] };

  if (last.role === 'user') return planFor(last.text, callId);
  if (last.role === 'tool') {
    if (/^\s*fail loop\b/i.test(lastUser.text)) return failingCall(callId);
    if (/^\s*loop\b/i.test(lastUser.text))
      return { text: 'Looping…', toolCalls: [{ id: callId(0), name: 'current_time', args: {} }] };
    return { text: summarise(transcript.slice(lastUserIndex + 1)), toolCalls: [] };
  }
  return { text: HELP, toolCalls: [] };
}

function planFor(text: string, callId: (n: number) => string): ModelReply {
  const lower = text.toLowerCase();
  // "call <tool> <JSON arguments>": any tool, with exactly these arguments (a non-JSON rest is passed as text).
  const call = /^\s*call\s+([a-z][a-z0-9_]*)\s*([\s\S]*)$/i.exec(text);
  if (call) {
    const rest = call[2]!.trim();
    // A mission run's goal has the run's own note appended on a new line: the arguments are then the first line.
    const parse = (text: string): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        return undefined;
      }
    };
    const args: unknown = rest ? (parse(rest) ?? parse(rest.split('\n')[0]!.trim()) ?? rest) : {};
    return { text: `Calling ${call[1]}.`, toolCalls: [{ id: callId(0), name: call[1]!, args }] };
  }
  if (/^\s*nothing to report\b/i.test(text))
    return { text: '[routine] Nothing new since the last run.', toolCalls: [] };
  if (/^\s*run\b/i.test(text)) {
    const quoted = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim()).filter(Boolean);
    const commands = quoted.length ? quoted : [text.replace(/^\s*run\s*:?\s*/i, '').trim()];
    if (commands[0]) {
      return {
        text: commands.length > 1 ? `I'll run ${commands.length} commands.` : `I'll run \`${commands[0]}\`.`,
        toolCalls: commands.map((command, i) => ({
          id: callId(i),
          name: 'shell_execute',
          args: { command },
        })),
      };
    }
  }
  const fetch = /^\s*(fetch|get)\s+(\S+)(?:\s+(?:with|as)\s+([a-z][a-z0-9-]*))?/i.exec(text);
  if (fetch)
    return {
      text: `Fetching ${fetch[2]}${fetch[3] ? ` with your ${fetch[3]} account` : ''}.`,
      toolCalls: [
        {
          id: callId(0),
          name: 'http_request',
          args: { method: 'GET', url: fetch[2], ...(fetch[3] ? { auth: fetch[3] } : {}) },
        },
      ],
    };
  const post = /^\s*post\s+(\S+)\s*([\s\S]*)$/i.exec(text);
  if (post) {
    return {
      text: `Posting to ${post[1]}.`,
      toolCalls: [
        { id: callId(0), name: 'http_request', args: { method: 'POST', url: post[1], body: post[2] ?? '' } },
      ],
    };
  }
  if (/\bask me\b/.test(lower))
    return {
      text: 'I need two answers first.',
      toolCalls: [{ id: callId(0), name: 'ask_user', args: { questions: DEMO_QUESTIONS } }],
    };
  if (/\bask one\b/.test(lower))
    return {
      text: 'One question.',
      toolCalls: [{ id: callId(0), name: 'ask_user', args: { questions: DEMO_QUESTIONS.slice(0, 1) } }],
    };
  if (/^\s*fail loop\b/.test(lower)) return failingCall(callId);
  if (/^\s*loop\b/.test(lower))
    return { text: 'Looping…', toolCalls: [{ id: callId(0), name: 'current_time', args: {} }] };
  if (/bad arguments/.test(lower))
    return {
      text: 'Calling a tool wrongly on purpose.',
      toolCalls: [{ id: callId(0), name: 'shell_execute', args: { cmd: 42 } }],
    };
  const zone = /\btime in ([A-Za-z_]+\/[A-Za-z_]+)/.exec(text);
  if (zone)
    return { text: '', toolCalls: [{ id: callId(0), name: 'current_time', args: { timezone: zone[1] } }] };
  if (/\btime\b/.test(lower))
    return { text: '', toolCalls: [{ id: callId(0), name: 'current_time', args: {} }] };
  return { text: `You said: "${text.slice(0, 500)}". ${HELP}`, toolCalls: [] };
}

/** The same request to a port nothing listens on, again and again: shows the repeated-error stop. */
function failingCall(callId: (n: number) => string): ModelReply {
  return {
    text: 'Trying again…',
    toolCalls: [
      { id: callId(0), name: 'http_request', args: { method: 'GET', url: 'http://127.0.0.1:9/unreachable' } },
    ],
  };
}

const DEMO_QUESTIONS = [
  {
    label: 'Environment',
    prompt: 'Where should I deploy?',
    options: [{ label: 'staging', description: 'safe to break' }, { label: 'production' }],
  },
  {
    label: 'Checks',
    prompt: 'Which checks should run first?',
    options: [{ label: 'lint' }, { label: 'tests' }, { label: 'build' }],
    multi_select: true,
    allow_custom: true,
    required: false,
  },
];

function describeAnswers(content: string): string {
  try {
    const result = JSON.parse(content) as {
      answers: { question: string; selected: string[]; custom?: string }[];
      answered_by: string;
    };
    const parts = result.answers.map(
      (a) =>
        `${a.question}: ${[...a.selected, ...(a.custom ? [`"${a.custom}"`] : [])].join(', ') || '(no answer)'}`,
    );
    return `@${result.answered_by} answered — ${parts.join('; ')}.`;
  } catch {
    return content;
  }
}

/** Longer than this, a result is summarised, as a real model does: the page shows it whole under its call. */
const QUOTED_RESULT_LINES = 5;
const QUOTED_RESULT_CHARS = 300;

function describeResult(tool: string, content: string): string {
  const lines = content.trimEnd().split('\n');
  if (lines.length <= QUOTED_RESULT_LINES && content.length <= QUOTED_RESULT_CHARS)
    return `**${tool}** returned:\n\`\`\`\n${content}\n\`\`\``;
  const first =
    lines
      .find((line) => line.trim())
      ?.trim()
      .slice(0, 80) ?? '';
  return `**${tool}** returned ${lines.length} lines (${content.length.toLocaleString('en-US')} characters), shown in full with the call above; it begins \`${first}\`.`;
}

function summarise(sinceUser: Message[]): string {
  const calls = new Map<string, ToolCall>();
  for (const m of sinceUser)
    if (m.role === 'assistant') for (const call of m.toolCalls) calls.set(call.id, call);
  const lines = sinceUser.flatMap((m) => {
    if (m.role !== 'tool') return [];
    if (m.name === 'ask_user' && m.status === 'ok') return [`Thanks! ${describeAnswers(m.content)}`];
    switch (m.status) {
      case 'ok':
        return [describeResult(m.name, m.content)];
      case 'denied':
        return [`**${m.name}** was not run — ${m.content} I won't try it again.`];
      case 'expired':
        return [`**${m.name}** was not run — ${m.content}`];
      case 'superseded':
        return [`**${m.name}** was not run — ${m.content}`];
      default:
        return [`**${m.name}** ended with ${m.status}: ${m.content}`];
    }
  });
  return lines.length ? lines.join('\n\n') : 'Done.';
}

/** A summary request: what each person said, in order, shortened (deterministic, so tests can read it). */
function scriptedSummary(prompt: string): string {
  const said = [...prompt.matchAll(/^@([^:\n]+): (.{0,40})/gm)].map((m) => `@${m[1]} said "${m[2]!.trim()}"`);
  const earlier = /The summary so far:\n([\s\S]*?)\n\nThe messages to add:/.exec(prompt)?.[1];
  return [earlier, said.length ? `Earlier: ${said.join('; ')}.` : ''].filter(Boolean).join(' ');
}

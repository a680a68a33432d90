/** Text shaping every chat platform needs: messages split within a size limit, argument previews, answers. */
import type { Question } from '../common/tools/ask-user';
import type { Gate, QuestionGate } from '../workflows/session/contract';

/** What a sender is told when Temporal did not take their message (nothing was recorded; the platform will not resend). */
export const MESSAGE_NOT_TAKEN =
  "I could not take your message just now (the agent's server is unreachable), so nothing was recorded. Please send it again in a moment.";

/** Splits text at line breaks into chunks of at most `limit` characters; over-long lines are split hard. */
export function splitMessage(text: string, limit: number): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    const pieces =
      line.length > limit ? (line.match(new RegExp(`[\\s\\S]{1,${limit}}`, 'g')) ?? ['']) : [line];
    for (const piece of pieces) {
      const next = current ? `${current}\n${piece}` : piece;
      if (next.length > limit) {
        chunks.push(current);
        current = piece;
      } else current = next;
    }
  }
  if (current || chunks.length === 0) chunks.push(current);
  return chunks.length > 1
    ? chunks.map((chunk, i) => `${chunk}\n_(part ${i + 1} of ${chunks.length})_`)
    : chunks;
}

/** Tool arguments as a code block of bounded size; the Edit dialog shows them all. */
export function argsPreview(args: unknown, limit: number): string {
  const json = JSON.stringify(args, null, 2) ?? '';
  const body =
    json.length > limit
      ? `${json.slice(0, limit)}\n… (${json.length - limit} more characters; Edit & approve shows them all)`
      : json;
  return `\`\`\`${body.replace(/```/g, "'''")}\`\`\``;
}

/** "Label: choice, “own words”" for each answer of a decided question gate (a server's text through `plain`). */
export function answerLines(
  gate: Gate,
  bold: (text: string) => string,
  plain: (text: string) => string = (text) => text,
): string[] {
  const shown = gate.kind === 'question' && gate.asks ? plain : (text: string) => text;
  return (gate.resolution?.answers ?? []).map(
    (answer) =>
      `${bold(shown(answer.question))}: ${[...answer.selected.map(shown), ...(answer.custom ? [`“${shown(answer.custom)}”`] : [])].join(', ') || '(no answer)'}`,
  );
}

/**
 * A question gate's questions as shown in chat: a tool server's (MCP elicitation) with every text it wrote passed
 * through `plain` (no mentions, links or markup of its own); the model's ask_user questions as they are.
 */
export function shownQuestions(
  gate: QuestionGate,
  plain: (text: string) => string,
  /** How the chat writes a URL so that it stays a link (the worker let only plain http(s) URLs through). */
  link: (url: string) => string = (url) => url,
): Question[] {
  if (!gate.asks) return gate.questions;
  const url = gate.asks.url;
  const prompt = (text: string) => (url ? text.split(url).map(plain).join(link(url)) : plain(text));
  return gate.questions.map((q) => ({
    ...q,
    label: plain(q.label),
    prompt: prompt(q.prompt),
    options: q.options.map((o) => ({
      label: plain(o.label),
      ...(o.description ? { description: plain(o.description) } : {}),
    })),
  }));
}

/** What a decided prompt was about, for its edited text: the tool, the sign-in, or the question. */
export function decidedSubject(gate: Gate, question: string): string {
  if (gate.kind === 'approval') return `\`${gate.toolName}\``;
  if (gate.kind === 'credential') return `${gate.providerName} sign-in for \`${gate.toolName}\``;
  return question;
}

/**
 * Who asks a question gate's questions, for its prompt: "Question for @x", or, when a tool server asks in the
 * middle of a call (MCP elicitation), which server, the part of a long form, and the server's own words.
 */
export function questionIntro(
  gate: QuestionGate,
  mention: string,
  bold: (text: string) => string,
  plain: (text: string) => string = (text) => text,
): string {
  if (!gate.asks) return `${bold('Question for')} ${mention}`;
  const part = gate.asks.part ? ` (part ${gate.asks.part[0]} of ${gate.asks.part[1]})` : '';
  const said = gate.asks.message.trim()
    ? `\n> ${plain(gate.asks.message.trim()).replace(/\n/g, '\n> ')}`
    : '';
  return `${bold(`The "${plain(gate.asks.server)}" tool server asks`)} ${mention}${part}, for \`${plain(gate.toolName)}\`:${said}\n_Your answer goes to the server, and the call is made again from the start with it._`;
}

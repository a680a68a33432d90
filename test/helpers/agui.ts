/** The AG-UI endpoint as a test speaks to it by hand (no client library): a RunAgentInput, the events it streams. */
import { randomUUID } from 'node:crypto';

/** An AG-UI event as the tests read it back. */
export interface AguiEvent {
  type: string;
  code?: string;
  message?: string;
  outcome?: { type: string; interrupts?: { id: string }[] };
}

/** A minimal valid RunAgentInput for `threadId`, with `extra` fields (messages, resume, …) over it. */
export function aguiInput(threadId: string, extra: Record<string, unknown> = {}) {
  return { threadId, runId: randomUUID(), messages: [], tools: [], context: [], ...extra };
}

/** The same, with one new user message. */
export function aguiSay(threadId: string, text: string) {
  return aguiInput(threadId, { messages: [{ id: randomUUID(), role: 'user', content: text }] });
}

/** POSTs `body` (JSON, or a raw string) to the endpoint and reads the whole stream's events. */
export async function postAgui(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; events: AguiEvent[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, events: sseData(await response.text()) };
}

/** The `data:` of each server-sent event, parsed. */
export function sseData(text: string): AguiEvent[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as AguiEvent);
}

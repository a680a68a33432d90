/**
 * A tool server's question in the middle of a call (MCP elicitation, common/tools/elicitation.ts): asked with the
 * ask_user machinery — a question gate per five fields, forms in every channel, typed answers, days of waiting,
 * restarts — and only the person whose call it is may answer. The answers come back as the content the server's
 * schema wants (a wrong one is refused at the form, and the question stays open), or as "decline" when the
 * person refuses; a question that expires or is stopped ends the call.
 */
import * as wf from '@temporalio/workflow';
import {
  elicitContent,
  elicitFields,
  FIELDS_PER_GATE,
  fieldQuestion,
  urlQuestion,
  type ElicitAsk,
  type ElicitField,
  type ElicitReply,
} from '../../common/tools/elicitation';
import type { Answer } from '../../common/tools/ask-user';
import type { QuestionGate, ToolCall } from './contract';
import { openQuestionGate, resultWithoutRun, type UnrunResult } from './gates';
import { waitAt } from './gate-wait';
import type { Session } from './session';

const DEFAULT_QUESTION_TIMEOUT_MS = 24 * 3_600_000;

export type ServerQuestionOutcome = { reply: ElicitReply; by: string } | { result: UnrunResult };

export async function askServersQuestion(
  run: Session,
  call: ToolCall,
  toolName: string,
  ask: ElicitAsk,
  userId: string,
): Promise<ServerQuestionOutcome> {
  const fields = ask.mode === 'form' ? elicitFields(ask) : [];
  if ('error' in fields)
    return {
      result: { status: 'error', content: `not completed: ${fields.error} (the call was cancelled)` },
    };
  const parts: ElicitField[][] = [];
  for (let i = 0; i < fields.length; i += FIELDS_PER_GATE) parts.push(fields.slice(i, i + FIELDS_PER_GATE));
  if (ask.mode === 'url') parts.push([]);
  const answers: Answer[] = [];
  let by = userId;
  for (const [index, part] of parts.entries()) {
    const gate = openQuestionGate({
      id: wf.uuid4(),
      toolCallId: call.id,
      toolName,
      questions:
        ask.mode === 'url'
          ? [urlQuestion(ask)]
          : part.map((field) => fieldQuestion(field, ask.properties[field.key])),
      requesterId: userId,
      // The answers go to the server with this person's call: nobody answers for them.
      approvers: [],
      now: Date.now(),
      timeoutMs: run.settings.questionTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS,
      asks: {
        server: ask.server,
        message: ask.message,
        ...(ask.mode === 'url' ? { url: ask.url } : {}),
        fields: part,
        ...(parts.length > 1 ? { part: [index + 1, parts.length] as [number, number] } : {}),
      },
    });
    const answered = await waitForAnswer(run, gate);
    if ('result' in answered) return answered;
    if (answered.declined) return { reply: { digest: ask.digest, action: 'decline' }, by: answered.by };
    answers.push(...answered.answers);
    by = answered.by;
  }
  if (ask.mode === 'url') return { reply: { digest: ask.digest, action: 'accept' }, by };
  // Each part was checked as it was answered (evaluateAnswer); together they make the content.
  const content = elicitContent(fields, answers);
  if (!content.ok) return { result: { status: 'error', content: `not completed: ${content.error}` } };
  return { reply: { digest: ask.digest, action: 'accept', content: content.content }, by };
}

async function waitForAnswer(
  run: Session,
  gate: QuestionGate,
): Promise<{ answers: Answer[]; by: string; declined: boolean } | { result: UnrunResult }> {
  run.gates.open(gate);
  await waitAt(run, [gate]);
  const resolution = gate.resolution!;
  if (resolution.outcome === 'answered')
    return { answers: resolution.answers ?? [], by: resolution.by, declined: false };
  if (resolution.outcome === 'denied') return { answers: [], by: resolution.by, declined: true };
  if (resolution.outcome === 'expired')
    return {
      result: {
        status: 'expired',
        content: `not completed: the "${gate.asks!.server}" server asked a question and nobody answered in time; it was told the question was cancelled.`,
      },
    };
  return { result: resultWithoutRun(gate) ?? { status: 'error', content: 'not completed' } };
}

/**
 * Model fallback under chaos, on real processes (a worker and a gateway started as `npm start`'s are, a real
 * Temporal server) against a model server strict as OpenAI's: the primary answers a tool call, then 429 for the
 * step's follow-up, then 503 with `retry-after: 86400`. The step stays with the model that started it and waits
 * visibly, across a worker SIGKILL; a new turn meanwhile is answered by the fallback; then the person chooses "try
 * the fallback now" (someone who may not is refused) and the step finishes on the fallback. Each tool runs once and
 * the usage ledger is exactly what the server billed. "Lost": a tool run twice, a wait nobody was told of, an answer
 * from the wrong model, or a token the ledger and the server disagree on.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { SessionView } from '../../workflows/session/contract';
import { FakeOpenAi, type ChatRequest, type Reply } from '../helpers/fake-openai';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { chaosRuns, Tally } from './summary';

const RUNS = chaosRuns();
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const unavailable = (status: number, headers: Record<string, string> = {}): Reply => ({
  status,
  headers,
  body: {
    error: {
      message: status === 429 ? 'Rate limit reached' : 'Service unavailable',
      type: 'server_error',
      code: null,
    },
  },
});

/** The primary's script: a tool call for the first request, then out of capacity for the rest of the day. */
function primary(request: ChatRequest, out: boolean): Reply {
  if (!out && !request.messages.some((m) => m.role === 'tool'))
    return { toolCalls: [{ id: `call_${request.messages.length}`, name: 'current_time', args: {} }] };
  return unavailable(503, { 'retry-after': '86400' });
}

const toolRuns = (view: SessionView) => view.transcript.filter((m) => m.role === 'tool').length;
const billed = (fake: FakeOpenAi) =>
  fake.usages.reduce((sum, u) => sum + u.prompt_tokens + u.completion_tokens, 0);

describe('model fallback under chaos', () => {
  it(
    `keeps a tool step on its model through 429, a day-long retry-after and a worker SIGKILL (${RUNS} runs)`,
    async () => {
      const tally = new Tally();
      for (let run = 0; run < RUNS; run++) {
        let rateLimited = false;
        let out = false;
        const fake = await new FakeOpenAi(
          (request) => {
            if (request.model === 'small') return { text: 'answered by the fallback' };
            // The step's follow-up first meets a 429, as a rate limit mid-turn would.
            if (request.messages.some((m) => m.role === 'tool') && !rateLimited) {
              rateLimited = true;
              return unavailable(429);
            }
            const reply = primary(request, out);
            if ('status' in reply) out = true;
            return reply;
          },
          { latency: [40, 120] },
        ).start();
        let stack: Stack | undefined;
        const label = (what: string) => () => `run ${run}: ${what}`;
        try {
          stack = await startStack({
            temporalAddress: env.address,
            policy: { modelOutageTimeout: '2d' },
            env: { ...fake.env, MODEL: 'big', MODEL_FALLBACKS: 'openai:small' },
          });
          const web = stack.web;
          const stepped = `fallback-step-${run}`;
          await web.say(stepped, 'what time is it?');
          const waiting = await web.waitFor(
            stepped,
            (v) => v.notices.some((n) => n.text.includes("The model's provider asked us to wait until")),
            'the visible wait',
          );
          tally.check(waiting.status === 'running', label(`the wait shows as running: ${waiting.status}`));
          await stack.restartWorker();
          const after = await web.waitFor(
            stepped,
            (v) => v.version >= waiting.version,
            'the view after the kill',
          );
          tally.check(toolRuns(after) === 1, label(`the tool ran once (${toolRuns(after)})`));
          tally.check(
            !fake.requests.some((r) => r.model === 'small' && r.messages.some((m) => m.role === 'tool')),
            label('the step was never passed to the fallback'),
          );
          tally.check(after.status === 'running', label(`still waiting after the kill: ${after.status}`));

          // A new conversation meanwhile: the primary is out, the fallback answers, and says so.
          const fresh = `fallback-new-${run}`;
          await web.say(fresh, 'hello');
          const answered = await web.waitFor(
            fresh,
            (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'assistant'),
            'the fallback answer',
          );
          const answer = answered.transcript.filter((m) => m.role === 'assistant').at(-1) as
            { text: string; model?: string } | undefined;
          tally.check(
            answer?.text === 'answered by the fallback' && answer.model === 'openai:small',
            label(`the fallback answered: ${JSON.stringify(answer)}`),
          );
          // The wait is in the view, with whose turn it holds; a day away.
          tally.check(
            after.modelWait?.requesterId === 'alice' && after.modelWait.until > Date.now() + 3_600_000,
            label(`the wait is shown: ${JSON.stringify(after.modelWait)}`),
          );
          // Someone who may not use the conversation cannot end the wait; alice can, and the fallback finishes.
          const stranger = await web.request('POST', `/sessions/${stepped}/try-model-now`, {}, 'bob');
          tally.check(stranger.status === 404, label(`a stranger is refused: ${stranger.status}`));
          const chosen = await web.request('POST', `/sessions/${stepped}/try-model-now`, {});
          tally.check(chosen.status === 202, label(`the choice is accepted: ${chosen.status}`));
          const finished = await web.waitFor(
            stepped,
            (v) => v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant',
            'the step finished on the fallback',
          );
          const last = finished.transcript.at(-1) as { text: string; model?: string };
          tally.check(
            last.text === 'answered by the fallback' && last.model === 'openai:small',
            label(`the step finished on the fallback: ${JSON.stringify(last)}`),
          );
          tally.check(toolRuns(finished) === 1, label(`the tool still ran once (${toolRuns(finished)})`));
          tally.check(finished.modelWait === undefined, label('the wait is gone from the view'));
          // The ledger: every token the server billed is counted once, across both conversations and the kill.
          const counted = (finished.usage?.tokens ?? 0) + (answered.usage?.tokens ?? 0);
          tally.check(counted === billed(fake), label(`usage ${counted} = billed ${billed(fake)}`));
        } catch (error) {
          tally.check(
            false,
            label(`did not complete: ${(error as Error).message.slice(0, 400)}${stack?.logTail(1500) ?? ''}`),
          );
        } finally {
          await stack?.stop();
          await fake.stop();
        }
      }
      tally.finish(
        'model: a tool step keeps its model through 429, retry-after 86400 and a worker SIGKILL, until its person chooses the fallback',
      );
    },
    RUNS * 90_000,
  );
});

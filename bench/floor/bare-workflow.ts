/**
 * The floor the bench compares against: the least a conversation can be on this SDK. It waits for a signal,
 * runs one activity per message, and answers a query with the last result. No validation, no policy, no
 * transcript: what a session costs above this is what the runtime adds.
 */
import {
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';

export const bareMessageSignal = defineSignal<[string]>('bareMessage');
export const bareAnswerQuery = defineQuery<string | undefined>('bareAnswer');

const { echo } = proxyActivities<{ echo(text: string): Promise<string> }>({
  startToCloseTimeout: '10 seconds',
});

export async function bareWorkflow(): Promise<void> {
  const inbox: string[] = [];
  let answer: string | undefined;
  setHandler(bareMessageSignal, (text) => void inbox.push(text));
  setHandler(bareAnswerQuery, () => answer);
  for (;;) {
    await condition(() => inbox.length > 0);
    answer = await echo(inbox.shift()!);
  }
}

/**
 * The floor for parked sessions: waits for one signal, runs one activity, and ends (a parked session likewise
 * waits on a click, runs the tool and the model, and goes idle). Its `bareAnswer` query is what the bench asks
 * before signalling, as it asks a session for its open gates.
 */
export async function bareParkedWorkflow(): Promise<void> {
  const state: { message?: string; answer?: string } = {};
  setHandler(bareMessageSignal, (text) => void (state.message = text));
  setHandler(bareAnswerQuery, () => state.answer);
  await condition(() => state.message !== undefined);
  state.answer = await echo(state.message!);
}

/**
 * The fair floor for parked sessions (issue 36): the same durable steps a session's resume takes, and nothing else.
 * It parks visibly waiting (as a session does), and a signal then runs one activity and makes one visibility write
 * (the status, as a session's `setStatus`); it answers the same query before the signal and stays open after,
 * waiting for the next message, as an idle conversation does.
 */
export async function fairParkedWorkflow(): Promise<void> {
  const state: { message?: string; answer?: string } = {};
  setHandler(bareMessageSignal, (text) => void (state.message = text));
  setHandler(bareAnswerQuery, () => state.answer);
  upsertSearchAttributes({ AgentStatus: ['waiting_answer'] });
  await condition(() => state.message !== undefined);
  state.answer = await echo(state.message!);
  upsertSearchAttributes({ AgentStatus: ['idle'] });
  await condition(() => false);
}

/**
 * A session's own durable steps on a resume, without the session's code (bench kind `steps`): it parks waiting
 * visibly with a waiting line and a gate's expiry timer; a signal sets the status running and clears the line, runs
 * one activity with an input the size of a model call's, sets the status idle with a token count, and cancels the
 * timer. A session against this floor is what the runtime's code adds; this against `fair`, what its steps cost.
 */
export async function stepsParkedWorkflow(): Promise<void> {
  const state: { message?: string; answer?: string } = {};
  setHandler(bareMessageSignal, (text) => void (state.message = text));
  setHandler(bareAnswerQuery, () => state.answer);
  upsertSearchAttributes({ AgentStatus: ['waiting_answer'] });
  upsertMemo({ waitingFor: 'an answer' });
  const gate = new CancellationScope();
  const expiry = gate.run(() => sleep('24 hours')).catch(() => {});
  await condition(() => state.message !== undefined);
  upsertSearchAttributes({ AgentStatus: ['running'] });
  upsertMemo({ waitingFor: null });
  state.answer = await echo(`${state.message!}${' '.repeat(1_500)}`);
  upsertSearchAttributes({ AgentStatus: ['idle'], AgentTokens: [309] });
  gate.cancel();
  await expiry;
  await condition(() => false);
}

/**
 * One model call of a turn: the transcript within the context window (summarising older messages when the window
 * moves on), sent by reference where the worker's store holds it (transcript-chunks.ts). A model API outage waits,
 * doubling up to a ceiling, for `modelOutageTimeout`; a request too long for the model's context is summarised
 * harder and tried once more.
 */
import * as wf from '@temporalio/workflow';
import { FailureType } from '../../common/errors';
import { TRANSCRIPT_CHUNKS_MISSING } from '../../common/transcript-chunks';
import { resultIsOwnText } from '../../common/tools/missions';
import {
  buildContextWindow,
  DEFAULT_CONTEXT_TOKENS,
  MIN_CONTEXT_TOKENS,
  SUMMARY_SHARE,
  type ContextWindow,
} from './context-window';
import type { Message, StoppedWriting } from './contract';
import { clock } from '../../common/gates/words';
import {
  callModel,
  failureMessage,
  failureType,
  PERMANENT_MODEL_FAILURES,
  summarizeConversation,
} from './session-activities';
import type { Session } from './session';

const MODEL_OUTAGE_FIRST_RETRY_MS = 15_000;
const MODEL_OUTAGE_MAX_RETRY_MS = 5 * 60_000;
const DEFAULT_MODEL_OUTAGE_TIMEOUT_MS = 6 * 3_600_000;

/** callModel gave up on something that may pass (5xx, 429, a timeout), not on a refusal that will not. */
function isModelOutage(error: unknown): boolean {
  if (!(error instanceof wf.ActivityFailure)) return false;
  const cause = error.cause;
  // The provider asked for a long wait: final for the activity, an outage for the turn (it waits visibly).
  if (providerWait(error) !== undefined) return true;
  return !(
    cause instanceof wf.ApplicationFailure &&
    (cause.nonRetryable || PERMANENT_MODEL_FAILURES.includes(cause.type ?? ''))
  );
}

/** How long the provider asked us to wait (its retry-after, carried by the failure), if it asked. */
function providerWait(error: unknown): number | undefined {
  const cause = error instanceof wf.ActivityFailure ? error.cause : undefined;
  if (!(cause instanceof wf.ApplicationFailure) || cause.type !== 'ModelUnavailable') return undefined;
  const wait = (cause.details?.[0] as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof wait === 'number' && wait > 0 ? wait : undefined;
}

type ModelAnswer = Awaited<ReturnType<typeof callModel>>;

/** Where one model call's attempts stand (askModel). */
interface Attempts {
  /** While the model API is down: since when, and the next wait (doubling up to a ceiling). */
  outageSince?: number;
  retryIn: number;
  /** Set after the provider said the request was too long: the window is halved, once. */
  shrink: boolean;
  /** Set once the worker did not hold a chunk the call named: every message goes whole, once. */
  resent: boolean;
  /** The links of the messages the last attempt sent (transcript-chunks.ts). */
  links: string[];
  /** Someone chose "try the fallback now" during a provider's wait: every model of the chain may answer. */
  anyModel?: boolean;
}

/**
 * The model's reply, or undefined when it could not be had (the transcript then says why). A failed attempt is
 * tried again with a shorter window, with every message whole, or after an outage's wait (`tryAgain`).
 */
export async function askModel(run: Session, requesterId: string): Promise<ModelAnswer | undefined> {
  const attempts: Attempts = {
    retryIn: MODEL_OUTAGE_FIRST_RETRY_MS,
    shrink: false,
    resent: false,
    links: [],
  };
  for (;;) {
    let answer: ModelAnswer;
    try {
      answer = await send(run, requesterId, attempts);
    } catch (error) {
      if (await tryAgain(run, attempts, error, requesterId)) continue;
      return undefined;
    }
    run.transcriptChunks.stored(attempts.links, answer.lastLink);
    if (attempts.outageSince !== undefined) {
      run.state.notify('The model is answering again.');
      run.setStatus('running');
    }
    return answer;
  }
}

/** The call, after the servers' tool lists are read again or the window's older messages summarised if need be. */
async function send(run: Session, requesterId: string, attempts: Attempts): Promise<ModelAnswer> {
  if (run.mcp.needsRefresh(run.settings)) await run.mcp.refresh(run.settings, requesterId);
  const extraTools = run.mcp.extraTools(run.settings);
  const window = contextWindow(run, attempts.shrink, extraTools);
  const messages = window.toSummarise.length ? await summarised(run, window) : window.messages;
  const { transcript: chunked, links } = run.transcriptChunks.requestOf(messages);
  attempts.links = links;
  // A tool step goes on with the model that asked for it, never another one halfway (MODEL_FALLBACKS).
  const request = {
    chunked,
    ...(extraTools.length ? { extraTools } : {}),
    ...(attempts.anyModel ? {} : modelFor(run)),
  };
  return await callModel(request);
}

/**
 * After a failed attempt: whether to try again (a shorter window, every message whole, or after an outage's wait,
 * taken here); if not, the transcript says why.
 */
async function tryAgain(
  run: Session,
  attempts: Attempts,
  error: unknown,
  requesterId: string,
): Promise<boolean> {
  const { state } = run;
  if (wf.isCancellation(error)) throw error;
  if (!attempts.shrink && failureType(error) === FailureType.ContextTooLong) {
    attempts.shrink = true;
    return true;
  }
  if (!attempts.resent && failureType(error) === TRANSCRIPT_CHUNKS_MISSING) {
    attempts.resent = true;
    run.transcriptChunks.forget();
    return true;
  }
  // An outage (not a refusal like a bad key) keeps the turn waiting, up to modelOutageTimeout.
  const budget = run.settings.modelOutageTimeoutMs ?? DEFAULT_MODEL_OUTAGE_TIMEOUT_MS;
  const asked = providerWait(error);
  // A provider's wait that ends past what this conversation waits for a model: said now, not waited out first.
  const withinBudget = Date.now() - (attempts.outageSince ?? Date.now()) + (asked ?? 0) < budget;
  if (isModelOutage(error) && withinBudget) {
    if (asked !== undefined) {
      // Durable: a timer in the workflow, across restarts and deploys; Stop ends it like any wait of a turn.
      const until = Date.now() + asked;
      attempts.outageSince ??= Date.now();
      state.notify(
        `The model's provider asked us to wait until ${clock(until)} (${failureMessage(error)}). Your message is kept and will be answered then; "Try the fallback now" asks the other models at once, Stop ends the wait.`,
      );
      run.setStatus('running', `model provider asked to wait until ${clock(until)}`);
      await waitOrTryNow(run, attempts, { until, requesterId }, asked);
      return true;
    }
    if (attempts.outageSince === undefined) {
      attempts.outageSince = Date.now();
      state.notify(
        `The model is unavailable (${failureMessage(error)}); retrying since ${clock(attempts.outageSince)}. Your message is kept and will be answered when it is back.`,
      );
      run.setStatus('running', `model unavailable, retrying since ${clock(attempts.outageSince)}`);
    }
    await wf.sleep(attempts.retryIn);
    attempts.retryIn = Math.min(attempts.retryIn * 2, MODEL_OUTAGE_MAX_RETRY_MS);
    return true;
  }
  if (asked !== undefined && isModelOutage(error)) {
    const until = Date.now() + asked;
    state.appendAssistantNote(
      `⚠️ The model's provider asked us to wait until ${clock(until)}, longer than this conversation waits for a model (the policy's modelOutageTimeout); send your message again then. (${failureMessage(error)})`,
    );
    run.fail(`the model's provider asked to wait until ${clock(until)}`);
    if (attempts.outageSince !== undefined) run.setStatus('running');
    return false;
  }
  state.appendAssistantNote(`⚠️ I could not get an answer from the model: ${failureMessage(error)}`);
  run.fail(`the model failed: ${failureMessage(error)}`);
  if (attempts.outageSince !== undefined) run.setStatus('running');
  return false;
}

/**
 * The provider's wait, kept as a timer (the same command as a sleep), ended early when someone may and does choose
 * to try the models now: the next attempt then lets any model of the chain answer, this step's own included.
 */
async function waitOrTryNow(
  run: Session,
  attempts: Attempts,
  wait: { until: number; requesterId: string },
  ms: number,
): Promise<void> {
  const { state } = run;
  state.modelWait = wait;
  state.touch();
  try {
    const early = await wf.condition(() => state.modelWait?.tryNowBy !== undefined, ms);
    if (early) {
      attempts.anyModel = true;
      state.notify(`@${state.modelWait!.tryNowBy} chose not to wait: trying every model now.`);
    }
  } finally {
    state.modelWait = undefined;
    state.touch();
  }
}

/** What the model had written when Stop cancelled its call: the activity's cancellation carries it. */
export function writtenBeforeStop(error: unknown): string | undefined {
  const cause = error instanceof wf.ActivityFailure ? error.cause : undefined;
  if (!(cause instanceof wf.CancelledFailure)) return undefined;
  const details = cause.details[0] as Partial<StoppedWriting> | undefined;
  const written = typeof details?.written === 'string' ? details.written : '';
  return written.trim() ? written : undefined;
}

/** What the model is sent: the transcript within the context window (policy `contextTokens`; halved when shrunk). */
function contextWindow(
  run: Session,
  shrink: boolean,
  extraTools: unknown[],
): ContextWindow & { budget: number; overhead: number } {
  const { state, settings } = run;
  const budget = Math.max(
    MIN_CONTEXT_TOKENS,
    Math.floor((settings.contextTokens ?? DEFAULT_CONTEXT_TOKENS) / (shrink ? 2 : 1)),
  );
  const overhead =
    (settings.requestOverheadTokens ?? 0) +
    (extraTools.length ? Math.ceil(JSON.stringify(extraTools).length / 3.5) : 0);
  return { ...buildContextWindow(state.transcript, budget, overhead), budget, overhead };
}

/**
 * The window once its older messages are replaced by a durable summary (made here when the window moves on,
 * recorded in history as the activity's result).
 */
async function summarised(
  run: Session,
  window: ContextWindow & { budget: number; overhead: number },
): Promise<Message[]> {
  const { state } = run;
  const { budget, overhead } = window;
  try {
    const summary = await summarizeConversation({
      ...(window.previousSummary ? { previousSummary: window.previousSummary } : {}),
      messages: window.toSummarise,
      contextTokens: budget,
      maxSummaryTokens: Math.floor(budget * SUMMARY_SHARE),
    });
    state.appendSummary(summary, window.summariseThroughId!);
    return buildContextWindow(state.transcript, budget, overhead).messages;
  } catch (error) {
    if (wf.isCancellation(error)) throw error;
    // The older messages are left out (the request says so); the turn goes on, and the next one tries again.
    state.notify(
      `I could not summarise the earlier part of this conversation (${failureMessage(error)}); the model sees only the recent messages for now.`,
    );
    return window.messages;
  }
}

/**
 * The credential providers whose calls ran in this conversation (`"auth"` on a call with an `ok` result): what
 * they returned is in the model's context, and a later request elsewhere could carry it out.
 */
export function credentialedReads(transcript: readonly Message[]): string[] {
  const ran = new Set(
    transcript.flatMap((m) => (m.role === 'tool' && m.status === 'ok' && !m.synthetic ? [m.toolCallId] : [])),
  );
  const providers = new Set<string>();
  for (const m of transcript)
    if (m.role === 'assistant')
      for (const call of m.toolCalls) {
        const auth = (call.args as { auth?: unknown } | null)?.auth;
        if (typeof auth === 'string' && ran.has(call.id)) providers.add(auth);
      }
  return [...providers].sort();
}

/** Whether someone other than the requester wrote in this conversation (a shared Slack or Discord thread). */
export function othersWrote(transcript: readonly Message[], requesterId: string): boolean {
  return transcript.some((m) => m.role === 'user' && m.userId !== undefined && m.userId !== requesterId);
}

/** Whether the conversation the model sees holds a tool result that content from outside could have written. */
export function readOutsideContent(transcript: readonly Message[]): boolean {
  return transcript.some((m) => m.role === 'tool' && !m.synthetic && !resultIsOwnText(m.name));
}

/**
 * The model this call must use: a fork's chosen model (a retry "with model X" answers with X from its first call),
 * else the one whose tool step this call continues; none: the deployment's chain (MODEL_FALLBACKS).
 */
function modelFor(run: Session): { model?: string } {
  const chosen = run.input.fork?.model;
  return chosen ? { model: chosen } : stepModel(run);
}

/** The model that asked for the tool results the transcript ends with (the step this call continues), if any. */
function stepModel(run: Session): { model?: string } {
  const transcript = run.state.transcript;
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!;
    if (m.role === 'tool') continue;
    if (m.role === 'assistant' && m.toolCalls.length && m.model) return { model: m.model };
    return {};
  }
  return {};
}

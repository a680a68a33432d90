/**
 * `POST /api/agui`: the AG-UI 1.0 endpoint. A thread is a web conversation the caller may read (its id is the
 * conversation id the web app shows), a run is a turn: the run's new user message is sent as the page sends it, a
 * `resume` decides or answers the listed gates as the signed-in person with the same signals a click sends (sealed
 * by this gateway, checked by the workflow), and the turn's progress streams back as AG-UI events until it ends
 * (RUN_FINISHED, success) or waits on a person (RUN_FINISHED with every open gate as an interrupt). A run with only
 * a thread id reconnects: the messages and the open interrupts again, from any gateway instance.
 *
 * Nothing waits here: a gate is durable in its workflow, so a resume three days later, after deploys and restarts,
 * through another gateway, decides it exactly as a click would. Same sign-in modes, host and origin rules and rate
 * limits as the rest of the web API (routes.ts guards it); CORS only for the origins AGUI_ALLOWED_ORIGINS names.
 */
import { EventType, type BaseEvent } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Context, MiddlewareHandler } from 'hono';
import { stream } from 'hono/streaming';
import { webSessionIdSchema, webSessionWorkflowId } from '../../common/ids';
import { isTemporalNotAnswering } from '../../infra/temporal/deadline';
import type { Gate, Notice, SessionView } from '../../workflows/session/contract';
import { hidden, tooMany, type ApiEnv, type WebApi } from '../web/api-context';
import { clientMessageId, deliverMessage, NOT_ANSWERING } from '../web/message-route';
import { LatestEvent } from '../web/latest-event';
import { StreamCap, TOO_MANY_STREAMS } from '../web/stream-cap';
import { readMemoGates } from '../web/inbox-memo';
import { mayActOn } from '../../common/gates/deciders';
import { checkCoverage, gateInterrupt, resumeAction, type ResumeAction } from './interrupts';
import { forkForRun } from './fork';
import { RunEvents, transcriptMessages } from './run-events';

const KEEPALIVE_MS = 20_000;
/** How long a run waits for the conversation's current view before it sends (to know what the client has). */
const BASELINE_WAIT_MS = 3_000;
const PROTOCOL_VERSION = '1.0';
/** No gate prompt asks more at once than this; a longer resume is refused before anything is sent. */
const MAX_RESUME_ENTRIES = 50;

/** The run's verdict on input that cannot start: an HTTP error before any event (the client shows it). */
const refuse = (c: Context<ApiEnv>, status: 400 | 404 | 409 | 429 | 503, error: string) =>
  c.json({ error }, status);

/**
 * CORS for AG-UI front ends on the origins the operator named: the preflight here, and the headers on the run's
 * answer. Credentials are allowed (the web sign-in's cookie, or a bearer token); any other origin gets nothing.
 */
export function aguiCors(c: Context, allowed: readonly string[]): Response {
  const origin = c.req.header('origin')?.toLowerCase();
  if (!origin || !allowed.includes(origin)) return c.body(null, 403);
  return c.body(null, 204, {
    ...corsHeaders(origin),
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'content-type, accept, authorization',
    'access-control-max-age': '600',
  });
}

/** The CORS headers on every answer of the endpoint to an allowed origin (set before anything may refuse). */
export function aguiCorsHeaders(allowed: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header('origin')?.toLowerCase();
    if (origin && allowed.includes(origin))
      for (const [name, value] of Object.entries(corsHeaders(origin))) c.header(name, value);
    await next();
  };
}

const corsHeaders = (origin: string) => ({
  'access-control-allow-origin': origin,
  'access-control-allow-credentials': 'true',
  vary: 'Origin',
});

export function aguiRun(api: WebApi): (c: Context<ApiEnv>) => Promise<Response> {
  const cap = new StreamCap();
  return async (c) => {
    const userId = c.get('userId');
    const raw: unknown = await c.req.json().catch(() => undefined);
    if (raw === undefined) return refuse(c, 400, 'the body must be JSON: an AG-UI RunAgentInput');
    const parsed = RunAgentInputSchema.safeParse(raw);
    if (!parsed.success)
      return refuse(
        c,
        400,
        `not an AG-UI RunAgentInput: ${parsed.error.issues
          .slice(0, 5)
          .map((i) => `${i.path.join('.') || 'body'}: ${i.message}`)
          .join('; ')}`,
      );
    const input = parsed.data;
    const sessionId = webSessionIdSchema.safeParse(input.threadId);
    if (!sessionId.success)
      return refuse(c, 400, 'threadId must be a conversation id: 1 to 64 letters, digits, "-" or "_"');
    const workflowId = webSessionWorkflowId(sessionId.data);
    const said = newUserText(input.messages);
    if (said && 'error' in said) return refuse(c, 400, said.error);

    // A fork (forwardedProps.fork) makes this thread first; the run then goes on in it as in any conversation.
    let forkAnswerFrom: number | undefined;
    try {
      const forked = await forkForRun(
        api,
        userId,
        sessionId.data,
        input.forwardedProps,
        said && !('error' in said) ? said.messageId : undefined,
      );
      if (forked.kind === 'refused') return refuse(c, forked.status, forked.error);
      if (forked.kind === 'started' && forked.fork.answersNow) forkAnswerFrom = forked.fork.forkedFrom.at;
    } catch (error) {
      if (!isTemporalNotAnswering(error)) throw error;
      return refuse(c, 503, NOT_ANSWERING);
    }

    let access;
    let openGates: Gate[] = [];
    try {
      access = await api.deps.access.check(workflowId, userId);
      if (access === 'allowed') openGates = await memoGates(api, workflowId);
    } catch (error) {
      if (!isTemporalNotAnswering(error)) throw error;
      return refuse(c, 503, NOT_ANSWERING);
    }
    if (access === 'denied') return hidden(c);
    if (access === 'absent' && !said) return hidden(c);
    const release = cap.take(userId);
    if (!release) return refuse(c, 429, TOO_MANY_STREAMS);

    const encoder = new EventEncoder();
    const runId = input.runId;
    const threadId = input.threadId;
    c.header('content-type', 'text/event-stream');
    c.header('cache-control', 'no-cache');
    c.header('x-accel-buffering', 'no');
    return stream(c, async (out) => {
      let finished = false;
      const write = async (...events: BaseEvent[]) => {
        for (const event of events) await out.write(encoder.encodeSSE(event));
      };
      const fail = async (code: string, message: string) => {
        finished = true;
        await write({ type: EventType.RUN_ERROR, message, code } as BaseEvent);
      };
      // A conversation that existed and is gone ends the run; a new one is "not found" until its first message lands.
      const feed = new LatestEvent();
      const leave =
        access === 'allowed' || said ? api.deps.live.subscribe(workflowId, (e) => feed.put(e)) : undefined;
      const leavePartials = api.deps.streams?.subscribe(workflowId, (u) =>
        feed.putPartial({ streamId: u.streamId, text: u.text, done: u.done === true }),
      );
      const keepalive = setInterval(() => void out.write(': keepalive\n\n').catch(() => {}), KEEPALIVE_MS);
      let lastStatus: SessionView['status'] | undefined;
      /** This run sent what set the turn going (its message, resume or fork): only then is cancelling it Stop. */
      let startedTurn = forkAnswerFrom !== undefined;
      out.onAbort(() => {
        feed.close();
        // The person cancelled the run they started: Stop, as the page's Stop button does; what was written stays.
        // A run that only watched, or a connection the gateway itself closes (a deploy), stops nothing.
        if (!finished && startedTurn && lastStatus === 'running' && !api.deps.closing())
          void api.deps.sessions.stop(workflowId, userId).catch(() => {});
      });
      try {
        // What the client has: the conversation as it is before this run sends anything (or, with no worker
        // answering in time, the client's own list).
        const first = access === 'allowed' ? await feed.nextViewWithin(BASELINE_WAIT_MS) : undefined;
        const baseline = first?.transcript.map((m) => m.id) ?? input.messages.map((m) => m.id);
        const events = new RunEvents(baseline);
        const seenNotices = new Set((first?.notices ?? []).map((n) => n.id));
        await write({
          type: EventType.RUN_STARTED,
          threadId,
          runId,
          protocolVersion: PROTOCOL_VERSION,
          ...(input.parentRunId ? { parentRunId: input.parentRunId } : {}),
        } as BaseEvent);
        const clientIds = new Set(input.messages.map((m) => m.id));
        if (first && first.transcript.some((m) => !clientIds.has(m.id)))
          await write({
            type: EventType.MESSAGES_SNAPSHOT,
            messages: transcriptMessages(first.transcript),
          } as BaseEvent);
        if (first) {
          lastStatus = first.status;
          await write(...events.view(first));
        }

        // The resume first (the coverage rule, then every entry checked), then the new message.
        const resume = input.resume ?? [];
        // The open gates as the conversation shows them now; with no worker answering, as its memo keeps them.
        const mine = (first ? first.gates.filter((g) => g.status === 'pending') : openGates).filter((g) =>
          mayActOn(g, userId),
        );
        if (!resume.length && said && mine.length)
          return await fail(
            'interrupts_unanswered',
            `answer the open interrupts first (resume): ${mine.map((g) => g.id).join(', ')}`,
          );
        const resumed = new Map<string, ResumeAction>();
        if (resume.length > MAX_RESUME_ENTRIES)
          return await fail(
            'interrupt_payload_invalid',
            `a resume answers at most ${MAX_RESUME_ENTRIES} interrupts`,
          );
        if (resume.length) {
          // Each resume is a signal per entry in the conversation's history: the person's message rate bounds them.
          const wait = api.messageRate.take(userId);
          if (wait !== undefined) return await fail('rate_limited', tooMany({ what: 'messages', wait }));
          const known = first?.gates ?? mine;
          const covered = checkCoverage(resume, mine, [
            ...known,
            ...mine.filter((g) => !known.some((k) => k.id === g.id)),
          ]);
          if (covered) return await fail(covered.code, covered.message);
          const now = Date.now();
          for (const entry of resume) {
            const gate =
              mine.find((g) => g.id === entry.interruptId) ?? known.find((g) => g.id === entry.interruptId)!;
            const action = resumeAction(gate, entry, userId, now);
            if (action.kind === 'refused') return await fail(action.code, action.message);
            resumed.set(gate.id, action);
          }
          const sent = await sendResume(api, workflowId, userId, resumed, 'agui');
          if (sent) return await fail('temporal_unavailable', sent);
          startedTurn = true;
        }
        let waitingFor: string | undefined;
        if (said) {
          const delivery = await deliverMessage(api, userId, sessionId.data, {
            messageId: said.messageId,
            text: said.text,
          });
          if (delivery.kind === 'hidden') return await fail('thread_not_found', 'no such conversation');
          if (delivery.kind === 'limited') return await fail('rate_limited', tooMany(delivery));
          if (delivery.kind === 'unavailable') return await fail('temporal_unavailable', NOT_ANSWERING);
          waitingFor = delivery.message.messageId;
          startedTurn = true;
          api.deps.live.nudge(workflowId);
        }
        if (resumed.size) {
          api.deps.live.nudge(workflowId);
          api.inboxFeeds.nudge(userId);
        }

        /** After each view: the run goes on, ends with an error, or finishes (success, or the open interrupts). */
        const judge = async (view: SessionView): Promise<boolean> => {
          if (waitingFor && view.transcript.some((m) => m.role === 'user' && m.id === waitingFor))
            waitingFor = undefined;
          // The message was taken without a turn ("stop" typed, a queue already full): the workflow's words for it.
          const untaken =
            waitingFor !== undefined && view.queued === 0 && view.status !== 'running'
              ? view.notices.find((n) => n.to === userId && !n.about && !seenNotices.has(n.id))
              : undefined;
          if (untaken) {
            await write(...events.finish());
            await fail('message_not_taken', untaken.text);
            return true;
          }
          const refusal = refusedResume(view, resumed, userId, seenNotices);
          if (refusal) {
            await write(...events.finish());
            await fail(refusal.code, refusal.message);
            return true;
          }
          // A fork answering at once: not finished before its first answer (or gate) is there.
          if (
            forkAnswerFrom !== undefined &&
            !view.transcript.some((m) => m.role === 'assistant' && m.at >= forkAnswerFrom!) &&
            !view.gates.some((g) => g.status === 'pending')
          )
            return false;
          if (waitingFor || view.queued > 0 || !resumeSettled(view, resumed, userId)) return false;
          if (view.status === 'running') return false;
          await write(...events.finish());
          await write({
            type: EventType.MESSAGES_SNAPSHOT,
            messages: transcriptMessages(view.transcript),
          } as BaseEvent);
          // What this person can answer; gates waiting on others are in the state (who may decide, in words).
          const interrupts = view.gates
            .filter((g) => g.status === 'pending' && mayActOn(g, userId))
            .map((g) => gateInterrupt(g, userId, (p, e) => api.deps.connectUrl(userId, p, e)));
          finished = true;
          await write({
            type: EventType.RUN_FINISHED,
            threadId,
            runId,
            outcome: interrupts.length ? { type: 'interrupt', interrupts } : { type: 'success' },
          } as BaseEvent);
          return true;
        };
        if (first && (await judge(first))) return;
        for (let next = await feed.take(); next; next = await feed.take()) {
          if (next.type === 'partial') {
            await write(...events.partial(next.partial));
            continue;
          }
          // A conversation that existed and is gone ends the run; a new one is "not found" until its first message
          // lands, and "unavailable" (no worker) waits on.
          if (next.type === 'not-found' && access === 'allowed') break;
          if (next.type !== 'state') continue;
          lastStatus = next.view.status;
          await write(...events.view(next.view));
          if (await judge(next.view)) return;
        }
      } catch (error) {
        api.deps.log.warn('agui run failed', { workflowId, error: (error as Error).message });
        if (!finished) await fail('internal', 'the run failed on the gateway; try again').catch(() => {});
      } finally {
        clearInterval(keepalive);
        leave?.();
        leavePartials?.();
        release();
      }
    });
  };
}

/** The run's new user message: the last message, when it is the caller's (text parts only); undefined when none. */
function newUserText(
  messages: readonly { id: string; role: string; content?: unknown }[],
): { messageId: string; text: string } | { error: string } | undefined {
  const last = messages.at(-1);
  if (last?.role !== 'user') return undefined;
  const content = last.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content
            .map((part: { type?: string; text?: string }) =>
              part.type === 'text' ? (part.text ?? '') : undefined,
            )
            .join('\n')
        : '';
  if (Array.isArray(content) && content.some((part: { type?: string }) => part.type !== 'text'))
    return { error: 'only text messages are taken here (no images, audio or files)' };
  if (!text.trim()) return { error: 'the last user message is empty' };
  if (text.length > 20_000) return { error: 'the last user message is longer than 20,000 characters' };
  return { messageId: clientMessageId(last.id, 'agui'), text: text.trim() };
}

/** The open gates as the workflow's memo keeps them: the server answers with no worker running. */
async function memoGates(api: WebApi, workflowId: string): Promise<Gate[]> {
  try {
    return readMemoGates(await api.deps.sessions.memo(workflowId)).gates;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return [];
    throw error;
  }
}

/** Sends every resumed decision and answer, in order; the words for the person when Temporal did not take them. */
export async function sendResume(
  api: WebApi,
  workflowId: string,
  userId: string,
  resumed: ReadonlyMap<string, ResumeAction>,
  via: 'agui' | 'a2a',
): Promise<string | undefined> {
  try {
    let stopped = false;
    for (const [gateId, action] of resumed) {
      if (action.kind === 'decide')
        await api.deps.sessions.decide(workflowId, { ...action.decision, userId }, via);
      else if (action.kind === 'answer')
        await api.deps.sessions.answer(workflowId, { gateId, userId, answers: action.answers }, via);
      else if (action.kind === 'stop' && !stopped) {
        stopped = true;
        await api.deps.sessions.stop(workflowId, userId);
      }
    }
    api.deps.log.info('agui resume accepted', { workflowId, userId, gates: [...resumed.keys()] });
    return undefined;
  } catch (error) {
    if (!isTemporalNotAnswering(error) && !(error instanceof WorkflowNotFoundError)) throw error;
    return NOT_ANSWERING;
  }
}

/** Each resumed gate is decided (or, in a quorum, this person's approval counted), or the turn was stopped. */
export function resumeSettled(
  view: SessionView,
  resumed: ReadonlyMap<string, ResumeAction>,
  userId: string,
): boolean {
  for (const [gateId, action] of resumed) {
    if (action.kind === 'nothing') continue;
    const gate = view.gates.find((g) => g.id === gateId);
    if (!gate || gate.status !== 'pending') continue;
    if (gate.kind === 'approval' && gate.approvals?.some((a) => a.by === userId)) continue;
    return false;
  }
  return true;
}

/**
 * The workflow refused a resumed decision (decided elsewhere meanwhile, not this person's, a bad edit): its notice
 * to this person, as a typed error. A gate decided by someone else first is named with who and when.
 */
export function refusedResume(
  view: SessionView,
  resumed: ReadonlyMap<string, ResumeAction>,
  userId: string,
  seen: Set<string>,
): { code: string; message: string } | undefined {
  const fresh: Notice[] = view.notices.filter((n) => n.to === userId && !seen.has(n.id));
  for (const notice of fresh) seen.add(notice.id);
  for (const [gateId, action] of resumed) {
    if (action.kind !== 'decide' && action.kind !== 'answer') continue;
    const gate = view.gates.find((g) => g.id === gateId);
    const told = fresh.find((n) => n.about === gateId);
    if (!gate || !told) continue;
    if (
      gate.status === 'pending' &&
      !(gate.kind === 'approval' && gate.approvals?.some((a) => a.by === userId))
    )
      return { code: 'resume_refused', message: told.text };
    const counted = gate.kind === 'approval' && gate.approvals?.some((a) => a.by === userId);
    if (gate.status !== 'pending' && gate.resolution && gate.resolution.by !== userId && !counted)
      return { code: 'interrupt_already_decided', message: told.text };
  }
  return undefined;
}

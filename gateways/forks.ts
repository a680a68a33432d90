/**
 * Starting a fork (common/fork.ts) and finding a conversation's forks: shared by the web API and `agentctl`.
 *
 * A fork is a new web conversation owned by the person who forked, started with the cut transcript carried as
 * data (as an import is): no tool runs again, no grant or gate of the original comes along, and from its first
 * turn every tool call goes through the gates as that person, with their credentials. A retry is a fork whose
 * first turn starts at once, before the answer it writes again. The original is only read (one query and one
 * describe): its open gates and buttons are untouched.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { webSessionWorkflowId } from '../common/ids';
import { forkTranscript, type ForkMode, type ForkOrigin } from '../common/fork';
import { AgentChannel, AgentForkedFrom, AgentOwner, AgentStatus } from '../common/search-attributes';
import { transcriptQuery, type SessionInput } from '../workflows/session/contract';
import { carriedTranscript } from '../workflows/session/state';
import { withinDeadline } from '../infra/temporal/deadline';
import { isUnknownSearchAttribute } from '../infra/temporal/search-attributes';

export interface ForkRequest {
  /** The original conversation's workflow id. */
  from: string;
  /** The new conversation's id (an AG-UI client names its thread); absent: a new random one. */
  sessionId?: string;
  messageId: string;
  mode: ForkMode;
  /** Who forks: the new conversation's owner. */
  by: string;
  /** `provider:model`, one of `models`. */
  model?: string;
  /** Every id of the person forking (their web, Slack and Discord ids): whose messages are theirs. */
  byIds?: readonly string[];
  /** The id of a message the caller sends into the fork at once (AG-UI): refused if the cut holds it already. */
  newMessageId?: string;
}

/** Temporal refuses a start input over 2 MB; a fork's is refused before that, in words. */
export const MAX_FORK_BYTES = 1_900_000;

export interface StartedFork {
  sessionId: string;
  workflowId: string;
  forkedFrom: ForkOrigin;
  /** Its first turn started at once (a retry, or a fork through a person's message). */
  answersNow: boolean;
}

/** A fork that cannot be made as asked: said to the person as it is (400). */
export class ForkRefused extends Error {}

/** The models a fork may ask for: the deployment's model and its MODEL_FALLBACKS, as `provider:model`. */
export function checkForkModel(model: string | undefined, models: readonly string[]): void {
  if (model !== undefined && !models.includes(model))
    throw new ForkRefused(
      `"${model}" is not a model of this deployment; choose one of: ${models.join(', ') || '(none)'}`,
    );
}

export async function startFork(
  client: Client,
  taskQueue: string,
  request: ForkRequest,
  deadlineMs: number,
): Promise<StartedFork> {
  const original = client.workflow.getHandle(request.from);
  const [transcript, described] = await withinDeadline(client, deadlineMs, () =>
    Promise.all([original.query(transcriptQuery), original.describe()]),
  );
  const cut = forkTranscript(transcript, request.messageId, request.mode);
  if (!cut.ok) throw new ForkRefused(cut.error);
  // A turn that starts at once acts on the last person's message, as whoever forked: only on their own words (an
  // approver's retry of someone else's message would run that person's instruction with the approver's sign-ins).
  const lastAsked = cut.messages.findLast((m) => m.role === 'user');
  const ownWords = lastAsked?.role === 'user' && (request.byIds ?? [request.by]).includes(lastAsked.userId);
  if (request.mode === 'retry' && !ownWords)
    throw new ForkRefused(
      `only @${lastAsked?.role === 'user' ? lastAsked.userId : '?'}, who wrote the message this answers, can retry it: the retry would act on their words as you. Fork from it instead and write your own message.`,
    );
  if (request.newMessageId && cut.messages.some((m) => m.id === request.newMessageId))
    throw new ForkRefused(
      'the new message has the id of a message the fork already holds: send it with a new id',
    );
  const sessionId = request.sessionId ?? randomUUID();
  const workflowId = webSessionWorkflowId(sessionId);
  const at = Date.now();
  const forkedFrom: ForkOrigin = {
    workflowId: request.from,
    messageId: request.messageId,
    mode: request.mode,
    by: request.by,
    at,
    ...(request.model ? { model: request.model } : {}),
    ...(cut.original ? { original: cut.original } : {}),
  };
  // A retry, or a fork through the forker's own message, answers at once: its turn starts where a turn waits before
  // its next model call. Through someone else's message, the fork waits for the forker's own.
  const answersNow = request.mode === 'retry' || (cut.messages.at(-1)?.role === 'user' && ownWords);
  if (answersNow && request.newMessageId)
    throw new ForkRefused(
      'this fork answers the message it was made at by itself: send no new message with it (or fork from an answer)',
    );
  const title = typeof described.memo?.title === 'string' ? described.memo.title : undefined;
  const input: SessionInput = {
    sessionId,
    channel: 'web',
    ownerId: request.by,
    fork: forkedFrom,
    carried: {
      // Bounded as a run's carried transcript is (the start's payload stays under Temporal's 2 MB).
      transcript: carriedTranscript(cut.messages, request.from, randomUUID),
      grants: [],
      inbox: [],
      gates: [],
      notices: [
        {
          id: randomUUID(),
          text: forkNotice(forkedFrom, title, answersNow, cut.messages.at(-1)?.role === 'user' && !ownWords),
          at,
        },
      ],
      ...(answersNow ? { turn: { requesterId: request.by, step: 0, atBudgetGate: true as const } } : {}),
    },
  };
  const bytes = Buffer.byteLength(JSON.stringify(input));
  if (bytes > MAX_FORK_BYTES)
    throw new ForkRefused(
      `the conversation up to that message is too large to fork (${(bytes / 1e6).toFixed(1)} MB; a fork starts with at most ${(MAX_FORK_BYTES / 1e6).toFixed(1)} MB)`,
    );
  const start = (lineage: boolean) =>
    withinDeadline(client, deadlineMs, () =>
      client.workflow.start('sessionWorkflow', {
        workflowId,
        taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: [
          { key: AgentStatus, value: answersNow ? 'running' : 'idle' },
          { key: AgentChannel, value: 'web' },
          { key: AgentOwner, value: request.by },
          ...(lineage ? [{ key: AgentForkedFrom, value: request.from }] : []),
        ],
        // Shown in the Temporal UI and the conversation list; the lineage is searchable as AgentForkedFrom.
        memo: { title: `Fork: ${title ?? request.from}`.slice(0, 80), forkedFrom },
      }),
    );
  try {
    await start(true);
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError)
      throw new ForkRefused('that conversation id is taken; fork again', { cause: error });
    // A namespace set up by hand before forks existed: the memo still holds the lineage.
    if (!isUnknownSearchAttribute(error)) throw error;
    await start(false);
  }
  return { sessionId, workflowId, forkedFrom, answersNow };
}

/** What the fork says first: where it came from, and what it did not bring along. */
function forkNotice(
  origin: ForkOrigin,
  title: string | undefined,
  answersNow: boolean,
  othersLastWord: boolean,
): string {
  const from = title ? `"${title}"` : origin.workflowId;
  const what =
    origin.mode === 'retry'
      ? `up to the answer being written again${origin.model ? ` with ${origin.model}` : ''}`
      : `up to the chosen message${answersNow ? ', which is answered again now' : othersLastWord ? ", someone else's: it is answered when you write, since this conversation acts as you" : ''}`;
  return [
    `Forked by @${origin.by} from ${from}, ${what}.`,
    'Nothing above runs again: tool results are copied as records. Approvals given there are not carried over, and',
    "tools run here as you, with your own sign-ins. The sandbox's files are not copied or rewound: this",
    "conversation's sandbox starts empty. The original conversation is unchanged.",
  ].join(' ');
}

export interface ForkSummary {
  workflowId: string;
  sessionId: string;
  by: string | undefined;
  messageId: string | undefined;
  mode: string | undefined;
  model: string | undefined;
  startTime: string;
}

/**
 * A conversation's forks, newest first (one visibility query on AgentForkedFrom, bounded); `owners`: only forks
 * made by those ids, filtered by the query itself, so nobody's own forks are crowded out by others'.
 */
export async function forksOf(
  client: Client,
  workflowId: string,
  deadlineMs: number,
  options: { limit?: number; owners?: readonly string[] } = {},
): Promise<ForkSummary[]> {
  const limit = options.limit ?? 20;
  const quoted = (value: string) => `'${value.replace(/['"\\]/g, '')}'`;
  const query = [
    `WorkflowType = 'sessionWorkflow' AND AgentForkedFrom = ${quoted(workflowId)}`,
    ...(options.owners ? [`AgentOwner IN (${options.owners.map(quoted).join(', ')})`] : []),
  ].join(' AND ');
  return await withinDeadline(client, deadlineMs, async () => {
    const out: ForkSummary[] = [];
    for await (const info of client.workflow.list({ query, pageSize: limit })) {
      const origin = (info.memo?.forkedFrom ?? {}) as Partial<ForkOrigin>;
      out.push({
        workflowId: info.workflowId,
        sessionId: info.workflowId.replace(/^session:web:/, ''),
        by: info.typedSearchAttributes.get(AgentOwner),
        messageId: origin.messageId,
        mode: origin.mode,
        model: origin.model,
        startTime: info.startTime.toISOString(),
      });
      if (out.length >= limit) break;
    }
    return out;
  });
}

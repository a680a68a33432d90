/**
 * The A2A request handler (`@a2a-js/sdk`'s A2ARequestHandler): every answer is read from the conversation's
 * workflow, nothing is kept here. SendMessage without a task id says something new in a conversation (the page's
 * own delivery: its rate limits, its owner rule) and its task is the turn that message starts; SendMessage to an
 * open task answers its interrupts with a `resume` data part, as the signed-in caller, through the same signals a
 * click sends (sealed by this gateway, checked by the workflow). A blocking call returns once the task ended or
 * waits on the caller (or after BLOCKING_MS, still working: GetTask or SubscribeToTask then follow it).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  Role,
  TaskState,
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ExtendedAgentCardNotConfiguredError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { ResumeEntrySchema } from '@ag-ui/core/schemas';
import type { ResumeEntry } from '@ag-ui/core';
import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { webSessionIdSchema, webSessionWorkflowId } from '../../common/ids';
import { describeWaiting } from '../../common/gates/words';
import { isTemporalNotAnswering } from '../../infra/temporal/deadline';
import { MAX_PUSH_CONFIGS, type PushConfig } from '../../infra/credentials/vault';
import { vetPushUrl } from '../../infra/a2a-push-destination';
import type { Gate, SessionView } from '../../workflows/session/contract';
import { tooMany, type WebApi } from '../web/api-context';
import { LatestEvent } from '../web/latest-event';
import { clientMessageId, deliverMessage, NOT_ANSWERING } from '../web/message-route';
import { gateInterrupt, resumeAction, type ResumeAction } from '../agui/interrupts';
import { refusedResume, resumeSettled, sendResume } from '../agui/route';
import { missionContextId, missionFireId, missionOfContext, recordedTask, standOf } from './mission-tasks';
import {
  parseTaskId,
  readTask,
  waitsOn,
  SETTLED,
  submittedTask,
  taskIdOf,
  TERMINAL,
  withHistoryLength,
  type TaskRead,
} from './tasks';

/** How long a blocking SendMessage waits for its task to end or to wait on the caller. */
const BLOCKING_MS = 60_000;
/** How long a stream follows a task before it ends (still working): the client subscribes again. */
const STREAM_MS = 10 * 60_000;
/** How long a read waits for the conversation's view (a worker starting, or a gateway's first query after one). */
const VIEW_WAIT_MS = 20_000;
const MAX_TEXT = 20_000;
const MAX_RESUME_ENTRIES = 50;
const LIST_PAGE = 50;
/** How often a mission task is read again while a call follows it. */
const MISSION_POLL_MS = 1_000;
const ENDED_RUNS_KEPT = 200;

/** Where the route puts the request's abort signal in the call's context (a caller gone ends its waits). */
export const ABORT_KEY = 'a2a.abort';

const refused = (code: string, message: string) =>
  new UnsupportedOperationError({ message, metadata: { code } });
const malformed = (message: string) => new RequestMalformedError({ message });

/** Who asks: the guard identified them before the request reached the handler (route.ts). */
function callerOf(context: ServerCallContext): string {
  const user = context.user;
  if (!user?.isAuthenticated) throw new Error('unauthenticated A2A call reached the handler');
  return user.userName;
}

/** What a message says: its text, and the resume entries of its data parts. Other kinds of content are refused. */
function contentOf(message: Message): { text: string; resume: ResumeEntry[]; mission?: string } {
  const texts: string[] = [];
  const resume: ResumeEntry[] = [];
  let mission: string | undefined;
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === 'text') texts.push(content.value);
    else if (content?.$case === 'data') {
      const fire = z.strictObject({ mission: z.string().trim().min(1).max(200) }).safeParse(content.value);
      if (fire.success) {
        if (mission !== undefined) throw malformed('a message fires one mission');
        mission = fire.data.mission;
        continue;
      }
      const entries = z
        .object({ resume: z.array(ResumeEntrySchema).max(MAX_RESUME_ENTRIES) })
        .safeParse(content.value);
      if (!entries.success)
        throw malformed(
          `a data part carries {"resume": [{"interruptId", "status": "resolved" | "cancelled", "payload"}]} (at most ${MAX_RESUME_ENTRIES}), or {"mission": "<name or id>"} to fire a mission`,
        );
      resume.push(...entries.data.resume);
    } else throw malformed('only text parts and a resume data part are taken here (no files or links)');
  }
  if (resume.length > MAX_RESUME_ENTRIES)
    throw malformed(`a message answers at most ${MAX_RESUME_ENTRIES} interrupts`);
  const text = texts.join('\n').trim();
  if (text.length > MAX_TEXT)
    throw malformed(`the text is longer than ${MAX_TEXT.toLocaleString('en')} characters`);
  return { text, resume, ...(mission !== undefined ? { mission } : {}) };
}

/** A push config's fields, bounded; an authentication needs both its scheme and its credentials. */
function parsePushConfig(params: TaskPushNotificationConfig): {
  id: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials: string };
} {
  const parsed = z
    .object({
      id: z
        .string()
        .max(64)
        .regex(/^[A-Za-z0-9_.-]*$/, 'letters, digits, _ . -'),
      url: z.string().min(1, 'a push config names its url'),
      token: z
        .string()
        .max(1_024)
        .regex(/^[\x21-\x7e]*$/, 'printable ASCII without spaces')
        .optional(),
      authentication: z
        .object({
          scheme: z
            .string()
            .regex(/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,31}$/, 'an HTTP auth scheme, e.g. Bearer'),
          credentials: z
            .string()
            .min(1)
            .max(4_096)
            .regex(/^[\x20-\x7e]*$/, 'printable ASCII'),
        })
        .optional(),
    })
    .safeParse({
      id: params.id ?? '',
      url: params.url ?? '',
      token: params.token || undefined,
      authentication: params.authentication?.scheme ? params.authentication : undefined,
    });
  if (!parsed.success)
    throw malformed(
      `push config: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}`,
    );
  if (/[\r\n]/.test(parsed.data.token ?? '')) throw malformed('push config: the token is one line');
  return {
    id: parsed.data.id,
    url: parsed.data.url,
    ...(parsed.data.token ? { token: parsed.data.token } : {}),
    ...(parsed.data.authentication ? { authentication: parsed.data.authentication } : {}),
  };
}

type VettedPush = ReturnType<typeof parsePushConfig>;

/** A stored config as it is read back: the token and credentials stay in the vault, never shown again. */
function shownPushConfig(config: PushConfig): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: config.id,
    taskId: config.taskId,
    url: config.url,
    token: '',
    authentication: config.authentication
      ? { scheme: config.authentication.scheme, credentials: '' }
      : undefined,
  };
}

/** A task as read: a mission task's run (when the caller may follow it) comes with its conversation's view. */
interface AnyRead extends TaskRead {
  view?: SessionView;
  run?: { workflowId: string; turnMessageId: string };
}

/** What a send waits for before its task is worth returning. */
interface Sent {
  contextId: string;
  messageId: string;
  /** A mission task's run, once known: the workflow its turn runs in, and the user message that starts it. */
  run?: { workflowId: string; turnMessageId: string };
  /** A new message: until the conversation took it. */
  awaitsMessage: boolean;
  /** A resume: the gates it decided, until each settled (or the workflow refused one). */
  resumed: ReadonlyMap<string, ResumeAction>;
  seenNotices: Set<string>;
  /** The caller went away: stop waiting for them. */
  abort?: AbortSignal;
}

const abortOf = (context: ServerCallContext) => context.state.get(ABORT_KEY) as AbortSignal | undefined;

export class ConversationTasks implements A2ARequestHandler {
  /** Ended mission runs' views, read once each (the newest ENDED_RUNS_KEPT). */
  private readonly endedRuns = new Map<string, SessionView>();

  constructor(
    private readonly api: WebApi,
    private readonly card: AgentCard,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError(
      'this agent has no extended card: the public one says it all',
    );
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const userId = callerOf(context);
    const sent = { ...(await this.sendWithPush(params, userId)), abort: abortOf(context) };
    const history = params.configuration?.historyLength;
    if (params.configuration?.returnImmediately)
      return withHistoryLength(
        (await this.current(sent, userId))?.task ?? submittedTask(sent.contextId, sent.messageId),
        history,
      );
    let last: TaskRead | undefined;
    for await (const read of this.follow(sent, userId, BLOCKING_MS)) last = read;
    return withHistoryLength(last?.task ?? submittedTask(sent.contextId, sent.messageId), history);
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const userId = callerOf(context);
    const sent = { ...(await this.sendWithPush(params, userId)), abort: abortOf(context) };
    yield* this.stream(sent, userId);
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const userId = callerOf(context);
    const ids = parseTaskId(params.id);
    if (!ids) throw new TaskNotFoundError(`no task ${params.id}`);
    const read = await this.readAny(ids.contextId, ids.messageId, userId);
    if (TERMINAL.has(read.task.status!.state))
      throw new UnsupportedOperationError(`task ${params.id} has ended; GetTask shows how`);
    yield* this.stream(
      { ...ids, awaitsMessage: false, resumed: new Map(), seenNotices: new Set(), abort: abortOf(context) },
      userId,
    );
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const userId = callerOf(context);
    const ids = parseTaskId(params.id);
    if (!ids) throw new TaskNotFoundError(`no task ${params.id}`);
    return withHistoryLength(
      (await this.readAny(ids.contextId, ids.messageId, userId)).task,
      params.historyLength,
    );
  }

  /** The tasks of one conversation (a context id is required: nothing lists every conversation), newest first. */
  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const userId = callerOf(context);
    if (!params.contextId) throw malformed('name the conversation: ListTasks takes a contextId');
    const missionId = missionOfContext(params.contextId);
    if (missionId) return await this.listMissionTasks(missionId, params, userId);
    const view = await this.view(params.contextId, userId);
    const ids = view.transcript
      .filter((m) => m.role === 'user')
      .map((m) => m.id)
      .reverse();
    const pageSize = Math.min(Math.max(params.pageSize ?? LIST_PAGE, 1), LIST_PAGE);
    const offset = params.pageToken ? Number(params.pageToken) : 0;
    if (!Number.isInteger(offset) || offset < 0) throw malformed('pageToken is the one a previous page gave');
    const tasks = ids
      .slice(offset, offset + pageSize)
      .map((id) => readTask(view, params.contextId, id, userId, this.interrupt(userId))!.task)
      .filter(
        (t) =>
          params.status === TaskState.TASK_STATE_UNSPECIFIED ||
          !params.status ||
          t.status?.state === params.status,
      )
      .map((t) => withHistoryLength(t, params.historyLength ?? 0));
    return {
      tasks,
      nextPageToken: offset + pageSize < ids.length ? String(offset + pageSize) : '',
      pageSize,
      totalSize: ids.length,
    };
  }

  /** Stop, as the page's Stop button: the turn's open gates close as stopped; what was written stays. */
  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const userId = callerOf(context);
    const ids = parseTaskId(params.id);
    if (!ids) throw new TaskNotFoundError(`no task ${params.id}`);
    const read = await this.readAny(ids.contextId, ids.messageId, userId);
    if (TERMINAL.has(read.task.status!.state))
      throw new TaskNotCancelableError(`task ${params.id} has already ended`);
    const missionRun = missionOfContext(ids.contextId) ? read.run : undefined;
    if (missionOfContext(ids.contextId) && !missionRun)
      throw new TaskNotCancelableError(
        `task ${params.id} is a mission's run that acts as its owner: they (or an approver) may stop it`,
      );
    const workflowId = missionRun?.workflowId ?? webSessionWorkflowId(ids.contextId);
    await this.temporal(() => this.api.deps.sessions.stop(workflowId, userId));
    this.api.deps.live.nudge(workflowId);
    let last: TaskRead = read;
    for await (const next of this.follow(
      { ...ids, awaitsMessage: false, resumed: new Map(), seenNotices: new Set(), abort: abortOf(context) },
      userId,
      BLOCKING_MS,
      TERMINAL,
    ))
      last = next;
    return last.task;
  }

  /**
   * Push notifications: the conversation itself has its task's changes posted to the URL (workflows/session/
   * a2a-push.ts), read as this caller reads the task, days later and across restarts. The URL is judged now (public
   * https, or a host in A2A_PUSH_ALLOW_HOSTS) and again at each push; the token or credentials are kept sealed in
   * the vault, never in the workflow's history, and never read back.
   */
  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const userId = callerOf(context);
    const ids = parseTaskId(params.taskId);
    if (!ids) throw new TaskNotFoundError(`no task ${params.taskId}`);
    const read = await this.readAny(ids.contextId, ids.messageId, userId);
    if (missionOfContext(ids.contextId))
      throw refused(
        'push_not_for_missions',
        'push notifications are for conversation tasks: follow a mission task with SubscribeToTask or GetTask',
      );
    if (TERMINAL.has(read.task.status!.state))
      throw refused('task_ended', `task ${params.taskId} has ended: nothing more will be pushed`);
    return await this.savePush(params, userId);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const mine = await this.pushConfigsOf(params.taskId, callerOf(context));
    const config = mine.find((c) => c.id === params.id);
    if (!config) throw new TaskNotFoundError(`no push config ${params.id} on task ${params.taskId}`);
    return shownPushConfig(config);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const mine = await this.pushConfigsOf(params.taskId, callerOf(context));
    return { configs: mine.map(shownPushConfig), nextPageToken: '' };
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    const mine = await this.pushConfigsOf(params.taskId, callerOf(context));
    if (!mine.some((c) => c.id === params.id))
      throw new TaskNotFoundError(`no push config ${params.id} on task ${params.taskId}`);
    await this.api.deps.credentials().vault.deletePushConfig(params.taskId, params.id);
  }

  /** This caller's push configs of a task they may read (another person's are not theirs to see). */
  private async pushConfigsOf(taskId: string, userId: string): Promise<PushConfig[]> {
    const ids = parseTaskId(taskId);
    if (!ids) throw new TaskNotFoundError(`no task ${taskId}`);
    await this.readAny(ids.contextId, ids.messageId, userId);
    if (missionOfContext(ids.contextId)) return [];
    const all = await this.api.deps.credentials().vault.pushConfigs(taskId);
    return all.filter((c) => c.userId === userId);
  }

  /** A config's fields and address judged before anything happens (a refused config sends no message either). */
  private async vetPush(params: TaskPushNotificationConfig): Promise<VettedPush> {
    const config = parsePushConfig(params);
    const vetted = await vetPushUrl(config.url, this.api.deps.a2aPushHosts);
    if (!vetted.ok) {
      if (vetted.detail) this.api.deps.log.info('a2a push url refused', { detail: vetted.detail });
      throw refused('push_url_refused', vetted.reason);
    }
    return { ...config, url: vetted.url.href };
  }

  private async savePush(
    params: TaskPushNotificationConfig,
    userId: string,
    vetted?: VettedPush,
  ): Promise<TaskPushNotificationConfig> {
    const ids = parseTaskId(params.taskId)!;
    const config = vetted ?? (await this.vetPush(params));
    const vault = this.api.deps.credentials().vault;
    const id = config.id || randomUUID();
    // An id another person chose on this task is theirs: not replaced, and not told apart from a full task.
    const existing = (await vault.pushConfigs(params.taskId)).find((c) => c.id === id);
    const saved =
      (!existing || existing.userId === userId) &&
      (await vault.savePushConfig({
        ...config,
        id,
        taskId: params.taskId,
        userId,
        createdAt: existing?.createdAt ?? Date.now(),
      }));
    if (!saved)
      throw refused(
        'push_configs_full',
        `task ${params.taskId} has ${MAX_PUSH_CONFIGS} push configs already, or that id is taken: remove one, or choose another id`,
      );
    const workflowId = webSessionWorkflowId(ids.contextId);
    await this.temporal(() => this.api.deps.sessions.followA2aTask(workflowId, params.taskId));
    this.api.deps.log.info('a2a push config set', { workflowId, userId, taskId: params.taskId });
    return shownPushConfig({ ...config, id, taskId: params.taskId, userId, createdAt: 0 });
  }

  // ---- sending ----

  /** A push config sent with the message, judged before the message is sent: then kept for the task it starts. */
  private async sendWithPush(params: SendMessageRequest, userId: string): Promise<Sent> {
    const push = params.configuration?.taskPushNotificationConfig;
    const toTask = params.message?.taskId ? parseTaskId(params.message.taskId) : undefined;
    if (
      push &&
      params.message &&
      (contentOf(params.message).mission !== undefined ||
        (toTask && missionOfContext(toTask.contextId) !== undefined))
    )
      throw refused(
        'push_not_for_missions',
        'push notifications are for conversation tasks: follow a mission task with SubscribeToTask or GetTask',
      );
    const vetted = push ? await this.vetPush(push) : undefined;
    const sent = await this.send(params, userId);
    if (push && vetted)
      await this.savePush({ ...push, taskId: taskIdOf(sent.contextId, sent.messageId) }, userId, vetted);
    return sent;
  }

  private async send(params: SendMessageRequest, userId: string): Promise<Sent> {
    const message = params.message;
    if (!message) throw malformed('SendMessage carries a message');
    if (message.role !== Role.ROLE_USER) throw malformed('a message to this agent has the user role');
    const { text, resume, mission } = contentOf(message);
    if (mission !== undefined) {
      if (message.taskId || resume.length)
        throw malformed('a mission is fired by a new message (no taskId) carrying only {"mission"} and text');
      return await this.fireMission(message, mission, text, userId);
    }
    if (message.taskId) {
      const ids = parseTaskId(message.taskId);
      if (!ids || (message.contextId && message.contextId !== ids.contextId))
        throw new TaskNotFoundError(
          `no task ${message.taskId}${message.contextId ? ` in context ${message.contextId}` : ''}`,
        );
      if (text)
        throw refused(
          'text_to_task',
          'a message to a task answers its interrupts with a data part {"resume": [...]}; to say something new, send it without taskId (same contextId)',
        );
      if (!resume.length) throw malformed('a message to a task carries a resume data part');
      return await this.resume(ids.contextId, ids.messageId, resume, userId);
    }
    if (resume.length)
      throw refused(
        'resume_without_task',
        'a resume answers the interrupts of a task: send it with that taskId',
      );
    if (!text) throw malformed('the message has no text');
    if (!message.messageId) throw malformed('the message has no messageId');
    // A new conversation only under an id this server makes: a caller-chosen one could be squatted by someone else.
    const contextId = message.contextId || `a2a-${randomBytes(16).toString('hex')}`;
    if (message.contextId) {
      const view = await this.view(contextId, userId);
      // Text while this caller's decisions are open would be read as a typed reply ("approve", "2", "stop"):
      // decisions come as a resume to their task, as in AG-UI.
      const open = view.gates.filter((g) => g.status === 'pending' && waitsOn(g, userId));
      if (open.length)
        throw refused(
          'interrupts_unanswered',
          `answer the open interrupts first, with a resume to their task: ${open.map((g) => g.id).join(', ')}`,
        );
    }
    const messageId = clientMessageId(message.messageId, 'a2a');
    const delivery = await deliverMessage(this.api, userId, contextId, { messageId, text });
    if (delivery.kind === 'hidden') throw new TaskNotFoundError(`no conversation ${contextId}`);
    if (delivery.kind === 'limited') throw refused('rate_limited', tooMany(delivery));
    if (delivery.kind === 'unavailable') throw new Error(NOT_ANSWERING);
    const workflowId = webSessionWorkflowId(contextId);
    this.api.deps.live.nudge(workflowId);
    this.api.deps.log.info('a2a message accepted', { workflowId, userId, messageId });
    return { contextId, messageId, awaitsMessage: true, resumed: new Map(), seenNotices: new Set() };
  }

  /** A resume to a task's open interrupts: each entry checked as the AG-UI endpoint does, then sent as clicks. */
  private async resume(
    contextId: string,
    messageId: string,
    resume: ResumeEntry[],
    userId: string,
  ): Promise<Sent> {
    const missionId = missionOfContext(contextId);
    let view: SessionView;
    let read: TaskRead | undefined;
    let run: AnyRead['run'];
    if (missionId) {
      const got = await this.readMission(missionId, contextId, messageId, userId);
      // A run the caller may not follow has no interrupts for them: its gates wait on its owner.
      if (!got.view)
        throw refused(
          'interrupt_unknown',
          `this mission's run acts as its owner, and its gates are theirs (or an approver's) to decide`,
        );
      ({ view, run } = got);
      read = got;
    } else {
      view = await this.view(contextId, userId);
      read = readTask(view, contextId, messageId, userId, this.interrupt(userId));
    }
    if (!read) throw new TaskNotFoundError(`no task ${taskIdOf(contextId, messageId)}`);
    // Each entry first: a gate decided elsewhere is told with who decided and when, even once the task has ended.
    const seen = new Set<string>();
    const resumed = new Map<string, ResumeAction>();
    const now = Date.now();
    for (const entry of resume) {
      if (seen.has(entry.interruptId))
        throw refused('interrupt_duplicate', `interrupt ${entry.interruptId} is answered twice`);
      seen.add(entry.interruptId);
      const gate = view.gates.find((g) => g.id === entry.interruptId);
      if (!gate) throw refused('interrupt_unknown', `no interrupt ${entry.interruptId} in this conversation`);
      if (
        gate.status === 'pending' &&
        gate.kind === 'approval' &&
        gate.approvals?.some((a) => a.by === userId)
      )
        throw refused(
          'interrupt_already_decided',
          `You already approved interrupt ${gate.id}; it waits for ${describeWaiting([gate])}.`,
        );
      const action = resumeAction(gate, entry, userId, now);
      if (action.kind === 'refused') throw refused(action.code, action.message);
      resumed.set(gate.id, action);
    }
    if (TERMINAL.has(read.task.status!.state))
      throw refused(
        'task_ended',
        `task ${read.task.id} has ended; send a new message without taskId (same contextId) to go on`,
      );
    const wait = this.api.messageRate.take(userId);
    if (wait !== undefined) throw refused('rate_limited', tooMany({ what: 'messages', wait }));
    const workflowId = run?.workflowId ?? webSessionWorkflowId(contextId);
    const notSent = await sendResume(this.api, workflowId, userId, resumed, 'a2a');
    if (notSent) throw new Error(notSent);
    this.api.deps.live.nudge(workflowId);
    this.api.inboxFeeds.nudge(userId);
    return {
      contextId,
      messageId,
      ...(run ? { run } : {}),
      awaitsMessage: false,
      resumed,
      seenNotices: new Set(view.notices.map((n) => n.id)),
    };
  }

  // ---- missions ----

  /** Fires a mission as the caller (mission_fire's rules); its task is `mission-<id>.<messageId>`. */
  private async fireMission(message: Message, mission: string, text: string, userId: string): Promise<Sent> {
    if (!message.messageId) throw malformed('the message has no messageId');
    if (message.contextId)
      throw malformed(
        'a mission fire starts its own task: send it without contextId (the task names the mission)',
      );
    const wait = this.api.messageRate.take(userId);
    if (wait !== undefined) throw refused('rate_limited', tooMany({ what: 'messages', wait }));
    const messageId = clientMessageId(message.messageId, 'a2a');
    const fired = await this.temporal(() =>
      this.api.deps.missions.fireFor(
        userId,
        { mission },
        missionFireId(userId, messageId),
        text || undefined,
      ),
    );
    if (!fired.ok) throw refused('mission_refused', fired.error);
    const contextId = missionContextId(fired.record.id);
    this.api.deps.log.info('a2a mission fired', { missionId: fired.record.id, userId, messageId });
    return { contextId, messageId, awaitsMessage: false, resumed: new Map(), seenNotices: new Set() };
  }

  /**
   * A mission task as this caller may read it: from the mission's record before its run, when it was skipped, when
   * its run ended, or for someone the run does not act as; from the run's own conversation for its owner (and the
   * policy's approvers) while it goes on, with its gates as interrupts.
   */
  private async readMission(
    missionId: string,
    contextId: string,
    messageId: string,
    userId: string,
  ): Promise<AnyRead> {
    const mission = await this.temporal(() => this.api.deps.missions.view(missionId));
    const stand = standOf(mission, missionFireId(userId, messageId));
    if (stand.kind === 'unknown') throw new TaskNotFoundError(`no task ${taskIdOf(contextId, messageId)}`);
    const recorded: AnyRead = { task: recordedTask(mission, contextId, messageId, stand), open: [] };
    if (stand.kind !== 'run') return recorded;
    const { run } = stand;
    const access = await this.temporal(() => this.api.deps.access.check(run.workflowId, userId));
    if (access !== 'allowed') return recorded;
    const ended = run.endedAt !== undefined;
    const view = ended ? await this.endedRunView(run.workflowId) : await this.viewOf(run.workflowId);
    const turn = view?.transcript.find((m) => m.role === 'user');
    if (!view || !turn) return recorded;
    const read = readTask(
      view,
      contextId,
      turn.id,
      userId,
      this.interrupt(userId),
      taskIdOf(contextId, messageId),
    );
    const located = { view, run: { workflowId: run.workflowId, turnMessageId: turn.id } };
    if (!read) return { ...recorded, ...located };
    // An ended run's outcome is the mission's (a denied gate fails it); its words are the run's own.
    if (ended && read.task.status!.state !== recorded.task.status!.state)
      return { ...recorded, ...located, task: { ...recorded.task, history: read.task.history } };
    return { ...read, ...located, task: { ...read.task, metadata: recorded.task.metadata } };
  }

  /** An ended run's view does not change: read once (a query of a closed workflow replays it), then kept. */
  private async endedRunView(workflowId: string): Promise<SessionView | undefined> {
    const kept = this.endedRuns.get(workflowId);
    if (kept) return kept;
    const view = await this.temporal(() => this.api.deps.missions.runView(workflowId)).catch(() => undefined);
    if (!view) return undefined;
    this.endedRuns.set(workflowId, view);
    while (this.endedRuns.size > ENDED_RUNS_KEPT) this.endedRuns.delete(this.endedRuns.keys().next().value!);
    return view;
  }

  /** This caller's fires of one mission, newest first (others' fires are theirs). */
  private async listMissionTasks(
    missionId: string,
    params: ListTasksRequest,
    userId: string,
  ): Promise<ListTasksResponse> {
    const mission = await this.temporal(() => this.api.deps.missions.view(missionId));
    const prefix = missionFireId(userId, '');
    const mine = [
      ...mission.runs.map((r) => ({ fireId: r.fireId, at: r.startedAt })),
      ...mission.skipped.map((s) => ({ fireId: s.fireId, at: s.at })),
    ]
      .filter(
        (f): f is { fireId: string; at: number } =>
          !!f.fireId?.startsWith(prefix) && /^[A-Za-z0-9_-]{1,64}$/.test(f.fireId.slice(prefix.length)),
      )
      .sort((a, b) => b.at - a.at);
    const tasks = mine
      .slice(0, LIST_PAGE)
      .map(({ fireId }) => {
        const stand = standOf(mission, fireId);
        return stand.kind === 'unknown'
          ? undefined
          : recordedTask(mission, params.contextId, fireId.slice(prefix.length), stand);
      })
      .filter((t): t is Task => !!t)
      .filter((t) => !params.status || t.status?.state === params.status);
    return { tasks, nextPageToken: '', pageSize: LIST_PAGE, totalSize: mine.length };
  }

  // ---- reading ----

  private interrupt(userId: string) {
    return (gate: Gate) =>
      gateInterrupt(gate, userId, (provider, expiresAt) =>
        this.api.deps.connectUrl(userId, provider, expiresAt),
      );
  }

  private async temporal<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError)
        throw new TaskNotFoundError({ message: 'no such conversation', cause: error });
      if (isTemporalNotAnswering(error)) throw new Error(NOT_ANSWERING, { cause: error });
      throw error;
    }
  }

  /** The conversation as this caller may read it; "not found" for one they may not (nothing tells it exists). */
  private async view(contextId: string, userId: string): Promise<SessionView> {
    if (!webSessionIdSchema.safeParse(contextId).success)
      throw new TaskNotFoundError(`no context ${contextId}`);
    const workflowId = webSessionWorkflowId(contextId);
    const access = await this.temporal(() => this.api.deps.access.check(workflowId, userId));
    if (access !== 'allowed') throw new TaskNotFoundError(`no context ${contextId}`);
    return await this.viewOf(workflowId);
  }

  /** A session workflow's view (a conversation, or a mission's run), for a caller already allowed to read it. */
  private async viewOf(workflowId: string): Promise<SessionView> {
    // Through the live feed, which asks again while a worker restarts (a first query can wait on a dead worker's
    // sticky queue), rather than one query that gives up.
    const feed = new LatestEvent();
    const leave = this.api.deps.live.subscribe(workflowId, (e) => feed.put(e));
    try {
      const view = await feed.nextViewWithin(VIEW_WAIT_MS);
      if (!view) throw new Error(NOT_ANSWERING);
      return view;
    } finally {
      feed.close();
      leave();
    }
  }

  /** Any task: a conversation's turn, or a mission's fire. */
  private async readAny(contextId: string, messageId: string, userId: string): Promise<AnyRead> {
    const missionId = missionOfContext(contextId);
    return missionId
      ? await this.readMission(missionId, contextId, messageId, userId)
      : await this.read(contextId, messageId, userId);
  }

  private async read(contextId: string, messageId: string, userId: string): Promise<TaskRead> {
    const view = await this.view(contextId, userId);
    const read = readTask(view, contextId, messageId, userId, this.interrupt(userId));
    if (!read) throw new TaskNotFoundError(`no task ${taskIdOf(contextId, messageId)}`);
    return read;
  }

  private async current(sent: Sent, userId: string): Promise<TaskRead | undefined> {
    if (missionOfContext(sent.contextId)) return await this.readAny(sent.contextId, sent.messageId, userId);
    const view = await this.view(sent.contextId, userId);
    return readTask(view, sent.contextId, sent.messageId, userId, this.interrupt(userId));
  }

  /**
   * The task as it moves, from the conversation's live feed (one watch per conversation on this gateway), until it
   * reaches one of `until` (ended, or waiting on the caller) or `ms` pass. A resume the workflow refused (decided
   * elsewhere first, not this person's) ends it with the workflow's words.
   */
  private async *follow(
    sent: Sent,
    userId: string,
    ms: number,
    until: ReadonlySet<TaskState> = SETTLED,
  ): AsyncGenerator<TaskRead, void, undefined> {
    if (missionOfContext(sent.contextId)) return yield* this.followMission(sent, userId, ms, until);
    const workflowId = webSessionWorkflowId(sent.contextId);
    const feed = new LatestEvent();
    const leave = this.api.deps.live.subscribe(workflowId, (e) => feed.put(e));
    const timer = setTimeout(() => feed.close(), ms);
    const gone = () => feed.close();
    sent.abort?.addEventListener('abort', gone);
    if (sent.abort?.aborted) feed.close();
    let lastKey = '';
    try {
      for (let next = await feed.take(); next; next = await feed.take()) {
        if (next.type !== 'state') continue;
        const view = next.view;
        const refusal = refusedResume(view, sent.resumed, userId, sent.seenNotices);
        if (refusal) throw refused(refusal.code, refusal.message);
        const read = readTask(view, sent.contextId, sent.messageId, userId, this.interrupt(userId));
        if (!read) {
          // Queued behind a gate still open in this conversation: taken, and waits its turn; say so now.
          const open = view.gates.filter((g) => g.status === 'pending');
          if (sent.resumed.size === 0 && view.queued > 0 && open.length) {
            yield {
              task: submittedTask(
                sent.contextId,
                sent.messageId,
                `Queued until ${describeWaiting(open)} is given.`,
              ),
              open: [],
            };
            return;
          }
          continue; // the message is not taken yet
        }
        const key = `${read.task.status!.state}:${read.task.status!.message?.messageId ?? ''}:${read.task.artifacts.length}`;
        if (key !== lastKey) {
          lastKey = key;
          yield read;
        }
        if (sent.resumed.size && !resumeSettled(view, sent.resumed, userId)) continue;
        if (until.has(read.task.status!.state)) return;
      }
    } finally {
      clearTimeout(timer);
      sent.abort?.removeEventListener('abort', gone);
      feed.close();
      leave();
    }
  }

  /**
   * A mission task as it moves: read again every second (the mission's record, and its run's conversation while it
   * goes on) until it reaches one of `until` or `ms` pass; a resume the run refused ends it with the run's words.
   */
  private async *followMission(
    sent: Sent,
    userId: string,
    ms: number,
    until: ReadonlySet<TaskState>,
  ): AsyncGenerator<TaskRead, void, undefined> {
    const deadline = Date.now() + ms;
    let lastKey = '';
    for (;;) {
      if (sent.abort?.aborted) return;
      const read = await this.readAny(sent.contextId, sent.messageId, userId);
      if (read.view && sent.resumed.size) {
        const refusal = refusedResume(read.view, sent.resumed, userId, sent.seenNotices);
        if (refusal) throw refused(refusal.code, refusal.message);
      }
      const key = `${read.task.status!.state}:${read.task.status!.message?.messageId ?? ''}:${read.task.artifacts.length}`;
      if (key !== lastKey) {
        lastKey = key;
        yield read;
      }
      const settled = !sent.resumed.size || !read.view || resumeSettled(read.view, sent.resumed, userId);
      if (settled && until.has(read.task.status!.state)) return;
      const left = deadline - Date.now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const gone = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(
          () => {
            sent.abort?.removeEventListener('abort', gone);
            resolve();
          },
          Math.min(MISSION_POLL_MS, left),
        );
        sent.abort?.addEventListener('abort', gone, { once: true });
      });
    }
  }

  private async *stream(sent: Sent, userId: string): AsyncGenerator<StreamResponse, void, undefined> {
    let first = true;
    for await (const read of this.follow(sent, userId, STREAM_MS)) {
      const task = read.task;
      if (first) {
        first = false;
        yield { payload: { $case: 'task', value: task } };
        continue;
      }
      for (const artifact of task.artifacts)
        yield {
          payload: {
            $case: 'artifactUpdate',
            value: {
              taskId: task.id,
              contextId: task.contextId,
              artifact,
              append: false,
              lastChunk: true,
              metadata: undefined,
            },
          },
        };
      yield {
        payload: {
          $case: 'statusUpdate',
          value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined },
        },
      };
    }
    if (first) yield { payload: { $case: 'task', value: submittedTask(sent.contextId, sent.messageId) } };
  }
}

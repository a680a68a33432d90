/**
 * The mission tools' executor: resolves names through the person's own directory (strongly consistent) and shared
 * missions through visibility (infra/missions-directory.ts), starts mission workflows and signals them. Everything a
 * person sees is limited to their own missions and shared ones; errors never reveal another person's missions.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { Cron } from 'croner';
import type { AppConfig } from '../infra/config';
import { legacyRename, resolveMission, type MissionAddress } from '../common/missions/addressing';
import {
  forgetUnstartedMission,
  missionById,
  ownMissions,
  refusalOf,
  registerMission,
  renameMission,
  sharedMissions,
  sharedMissionsNamed,
} from '../infra/missions-directory';
import {
  describeCadence,
  missionWorkflowId,
  type Cadence,
  type MissionRecord,
} from '../common/missions/types';
import { AgentMissionName, AgentMissionStatus, AgentOwner } from '../common/search-attributes';
import { isReadOnlyMissionOp, type MissionOp } from '../common/tools/missions';
import {
  completeSignal,
  fireSignal,
  missionViewQuery,
  pauseSignal,
  resumeSignal,
  updateMissionSignal,
  type MissionInput,
  type MissionSettings,
  type MissionView,
} from '../workflows/missions/contract';
import type { ToolRunResult } from './types';
import { sealingClient } from '../infra/temporal/sealing-interceptor';
import { sealedCall, sealSignal } from '../infra/gateway-seal';
import { missionCreationCall } from '../workflows/missions/contract';

type Args = Record<string, unknown> & MissionAddress;
/** Who asks, and the run's idempotency key (the same on every attempt of one call). */
type Who = { userId: string; sessionId: string; idempotencyKey?: string };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Shared missions of others a listing shows (the newest): more are found by name. */
const SHARED_LISTED = 50;
const ok = (content: string): ToolRunResult => ({ status: 'ok', content });
const error = (content: string): ToolRunResult => ({ status: 'error', content });

/** "manual", "webhook" or a cron expression (validated, with its time zone). */
export function parseCadence(text: string, timezone: string | undefined): Cadence | string {
  const trimmed = text.trim();
  if (/^manual$/i.test(trimmed)) return { kind: 'manual' };
  if (/^webhook$/i.test(trimmed)) return { kind: 'webhook' };
  const zone = timezone?.trim() || 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    return `"${zone}" is not a time zone: use an IANA name such as "Europe/Paris" or "UTC"`;
  }
  try {
    new Cron(trimmed, { timezone: zone, paused: true });
  } catch (cause) {
    return `"${trimmed}" is not a cron expression (${(cause as Error).message}); use "minute hour day month weekday", e.g. "0 9 * * 1-5", or "manual" / "webhook"`;
  }
  return { kind: 'cron', expression: trimmed, timezone: zone };
}

/** The next time a cron cadence fires after `after` (epoch ms), or null if it never does. */
export function nextCronTime(expression: string, timezone: string, after: number): number | null {
  const next = new Cron(expression, { timezone, paused: true }).nextRun(new Date(after));
  return next ? next.getTime() : null;
}

export class MissionTools {
  private sealingClient: Client | undefined;

  constructor(
    private readonly client: Client,
    private readonly config: AppConfig,
    /** The gateway key: changes to a mission are sealed in its owner's name, as a gateway seals a person's signals. */
    private readonly sealKey?: () => string,
  ) {}

  /** The client whose signals carry the seal (the plain one when no key is given, as in some unit tests). */
  private get sealed(): Client {
    if (!this.sealKey) return this.client;
    return (this.sealingClient ??= sealingClient(this.client, this.sealKey()));
  }

  private get taskQueue(): string {
    return this.config.temporal.taskQueue;
  }

  /**
   * What resolving this address needs, and never everyone's missions: the person's own, the shared ones named as
   * the address names them, and the one with the id given (if they may see it).
   */
  private async records(userId: string, address: MissionAddress): Promise<MissionRecord[]> {
    const given = [address.name, address.mission, address.id].map((v) => v?.trim()).filter((v) => !!v);
    const names = [...new Set(given.filter((v) => !UUID.test(v!)).map((v) => v!.toLowerCase()))];
    const ids = given.filter((v) => UUID.test(v!)) as string[];
    const [own, shared, identified] = await Promise.all([
      ownMissions(this.client, userId),
      Promise.all(names.map((name) => sharedMissionsNamed(this.client, name))),
      Promise.all(ids.map((id) => missionById(this.client, id))),
    ]);
    const found = [...own];
    for (const record of [...shared.flat(), ...identified])
      if (record && (record.ownerId === userId || record.shared) && !found.some((r) => r.id === record.id))
        found.push(record);
    return found;
  }

  /** mission_list: the person's own missions (those that may still run first), then shared ones of others. */
  private async list(userId: string): Promise<ToolRunResult> {
    const [own, shared] = await Promise.all([
      ownMissions(this.client, userId),
      sharedMissions(this.client, SHARED_LISTED),
    ]);
    const others = shared.records.filter((r) => r.ownerId !== userId);
    if (!own.length && !others.length) return ok('No missions yet. mission_create makes one.');
    const ordered = [
      ...own.filter((r) => r.status !== 'completed'),
      ...own.filter((r) => r.status === 'completed'),
    ];
    const lines = [
      ...ordered.map((r) => `- "${r.name}" — ${r.status}`),
      ...others.map((r) => `- "${r.name}" — ${r.status} (shared by @${r.ownerId})`),
    ];
    if (shared.more)
      lines.push(
        `More shared missions exist than the ${SHARED_LISTED} newest listed here: name one to find it.`,
      );
    return ok(lines.join('\n'));
  }

  private async hasEnded(workflowId: string): Promise<boolean> {
    const described = await this.client.workflow
      .getHandle(workflowId)
      .describe()
      .catch(() => undefined);
    return described !== undefined && described.status.name !== 'RUNNING';
  }

  /**
   * Fires a mission for someone outside a conversation (an A2A caller), exactly as mission_fire would for them:
   * found among the missions they may see, the same refusals, `fireId` taken once. The mission it fired, or why not.
   */
  async fireFor(
    userId: string,
    address: MissionAddress,
    fireId: string,
    context?: string,
  ): Promise<{ ok: true; record: MissionRecord; said: string } | { ok: false; error: string }> {
    const found = resolveMission(await this.records(userId, address), userId, address);
    if (!found.ok) return found;
    const result = await this.run(
      'fire',
      { id: found.record.id, ...(context ? { context } : {}) },
      { userId, sessionId: '', idempotencyKey: fireId },
    );
    return result.status === 'ok'
      ? { ok: true, record: found.record, said: result.content }
      : { ok: false, error: result.content };
  }

  async run(op: MissionOp, args: Args, who: Who): Promise<ToolRunResult> {
    switch (op) {
      case 'create':
        return await this.create(args, who);
      case 'list':
        return await this.list(who.userId);
      default:
        break;
    }
    const records = await this.records(who.userId, args);
    if (op === 'update') {
      const rename = legacyRename(args as Args & { new_name?: string }, records, who.userId);
      if (rename) return await this.update({ id: rename.id, new_name: rename.newName }, records, who);
      return await this.update(args, records, who);
    }
    const found = resolveMission(records, who.userId, args);
    if (!found.ok) return error(found.error);
    const handle = this.sealed.workflow.getHandle(missionWorkflowId(found.record.id));
    const label = `"${found.record.name}"`;
    const refusal = ownerRefusal(op, found.record, who.userId, args) ?? completedRefusal(op, found.record);
    if (refusal) return error(refusal);
    try {
      return await this.act(op, handle, label, args, who);
    } catch (cause) {
      if (!(cause instanceof WorkflowNotFoundError)) throw cause;
      // The mission ended between the look and the signal (completed meanwhile): say so, not "may have run".
      if (found.record.status === 'completed')
        return error(`${label} is completed: it will not run again. mission_create makes a new one.`);
      // Recorded, but never started: its name is given back, and the person told it never ran.
      await forgetUnstartedMission(this.client, found.record).catch(() => undefined);
      return error(
        `${label} was recorded but never started (its creation was cut off before its first step): it never ran and will not. Its name is free again: mission_create makes it.`,
      );
    }
  }

  private async act(
    op: MissionOp,
    handle: ReturnType<Client['workflow']['getHandle']>,
    label: string,
    args: Args,
    who: Who,
  ): Promise<ToolRunResult> {
    switch (op) {
      case 'get':
        return ok(this.describe(await handle.query(missionViewQuery)));
      case 'history':
        return ok(
          runHistory(await handle.query(missionViewQuery), typeof args.last === 'number' ? args.last : 10),
        );
      case 'fire': {
        const view = await handle.query(missionViewQuery);
        const fired = () =>
          ok(
            `Fired ${label}: a run starts now; ${view.settings.notifySessionId ? 'its result will be posted' : 'its result is not posted anywhere (notify: none), mission_get shows it'}.`,
          );
        // This call's fire arrived before the attempt that sent it was cut off: the same answer, no second fire.
        const fireId = who.idempotencyKey;
        if (fireId && view.fireIds?.includes(fireId)) return fired();
        // A run terminated (not cancelled) never tells its mission it ended: the fire goes through, and the
        // mission finds it ended, records it as failed and starts the new run.
        const ended = view.running ? await this.hasEnded(view.running) : false;
        const refusal = fireRefusal(ended ? { ...view, running: null, status: 'active' } : view, Date.now());
        if (refusal) return error(refusal);
        await handle.signal(fireSignal, {
          by: who.userId,
          trigger: 'manual',
          ...(typeof args.context === 'string' ? { context: args.context } : {}),
          ...(fireId ? { fireId } : {}),
        });
        return fired();
      }
      case 'pause':
        await handle.signal(pauseSignal, {
          by: who.userId,
          ...(typeof args.reason === 'string' ? { reason: args.reason } : {}),
        });
        return ok(`Paused ${label}. mission_resume starts it again.`);
      case 'resume': {
        const view = await handle.query(missionViewQuery);
        await handle.signal(resumeSignal, { by: who.userId });
        // A run that still waits keeps waiting (its decision still counts): say so rather than "cleared".
        const waiting = view.gate && view.gate.runWorkflowId === view.running ? view.gate : null;
        const n = view.runs.find((r) => r.workflowId === view.running)?.n;
        return ok(
          waiting
            ? `Resumed ${label}: active again, its failure count cleared; run ${n ?? '?'} still waits for ${waiting.needed}, and no new run starts until it ends.`
            : `Resumed ${label}: active again, with its recorded gate and failure count cleared.`,
        );
      }
      case 'complete':
        await handle.signal(completeSignal, {
          by: who.userId,
          ...(typeof args.reason === 'string' ? { reason: args.reason } : {}),
        });
        return ok(`Completed ${label}: it will not run again.`);
      default:
        return error(`unknown mission operation ${op}`);
    }
  }

  private settingsFrom(args: Args, sessionId: string): Partial<MissionSettings> | string {
    const settings: Partial<MissionSettings> = {};
    if (typeof args.goal === 'string') settings.goal = args.goal;
    if (typeof args.cadence === 'string') {
      const cadence = parseCadence(
        args.cadence,
        typeof args.timezone === 'string' ? args.timezone : undefined,
      );
      if (typeof cadence === 'string') return cadence;
      settings.cadence = cadence;
    }
    if (typeof args.notify === 'string') {
      const notify = args.notify.trim().toLowerCase();
      if (notify === 'here') settings.notifySessionId = sessionId;
      else if (notify === 'none') settings.notifySessionId = null;
      else return 'notify is "here" (this conversation) or "none"';
      // Gates and failures reach the owner where they last set this up, whatever notify says.
      settings.ownerSessionId = sessionId;
    }
    if (args.notify_mode === 'always' || args.notify_mode === 'notable')
      settings.notifyMode = args.notify_mode;
    if (typeof args.shared === 'boolean') settings.shared = args.shared;
    return settings;
  }

  private async create(args: Args, who: Who): Promise<ToolRunResult> {
    const settings = this.settingsFrom(args, who.sessionId);
    if (typeof settings === 'string') return error(settings);
    const name = String(args.name).trim();
    // Every attempt of one call makes the same mission: a create cut off between its record and its workflow is
    // run again, and finds both (the directory takes a known id as the same record, the start a started one).
    const id = who.idempotencyKey ? uuidOf(who.idempotencyKey) : randomUUID();
    const guardrails = this.config.policy.missions;
    const input: MissionInput = {
      id,
      name,
      ownerId: who.userId,
      settings: {
        goal: settings.goal!,
        cadence: settings.cadence!,
        notifySessionId: settings.notifySessionId === undefined ? who.sessionId : settings.notifySessionId,
        ownerSessionId: who.sessionId,
        notifyMode: settings.notifyMode ?? 'always',
        shared: settings.shared ?? false,
      },
      guardrails: {
        maxRunsPerDay: guardrails.maxRunsPerDay,
        cooldownMs: guardrails.cooldown === 'never' ? Number.MAX_SAFE_INTEGER : guardrails.cooldown,
        maxConsecutiveFailures: guardrails.maxConsecutiveFailures,
      },
    };
    try {
      await registerMission(this.client, this.taskQueue, {
        id,
        name,
        ownerId: who.userId,
        shared: input.settings.shared,
        status: 'active',
      });
    } catch (cause) {
      if (cause instanceof WorkflowUpdateFailedError) return error(refusalOf(cause));
      throw cause;
    }
    try {
      await this.client.workflow.start('missionWorkflow', {
        workflowId: missionWorkflowId(id),
        taskQueue: this.taskQueue,
        args: [this.sealKey ? { ...input, createdSeal: creationSeal(this.sealKey(), input) } : input],
        // A completed mission is never started again by a late attempt of the call that created it.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: AgentOwner, value: who.userId },
          { key: AgentMissionName, value: name },
          { key: AgentMissionStatus, value: 'active' },
        ],
      });
    } catch (cause) {
      // An earlier attempt of this call started it: the same answer.
      if (!(cause instanceof WorkflowExecutionAlreadyStartedError)) throw cause;
    }
    const cadence = input.settings.cadence;
    const next =
      cadence.kind === 'cron' ? nextCronTime(cadence.expression, cadence.timezone, Date.now()) : null;
    return ok(
      [
        `Created mission "${name}", ${describeCadence(cadence)}.`,
        next ? `First run: ${readableTime(next, Date.now())}.` : '',
        cadence.kind === 'webhook'
          ? `Webhook: its address and secret (header X-Mission-Secret) are for the owner only, at ${this.config.publicUrl.replace(/\/$/, '')}/api/missions/webhook?name=${encodeURIComponent(name)}.`
          : '',
        input.settings.notifySessionId
          ? 'Results will be posted in this conversation.'
          : 'Results are not posted anywhere (notify: none); approvals and questions of its runs come to this conversation.',
      ]
        .filter(Boolean)
        .join(' '),
    );
  }

  private async update(args: Args, records: MissionRecord[], who: Who): Promise<ToolRunResult> {
    const found = resolveMission(records, who.userId, args);
    if (!found.ok) return error(found.error);
    const refusal =
      ownerRefusal('update', found.record, who.userId, args) ?? completedRefusal('update', found.record);
    if (refusal) return error(refusal);
    const settings = this.settingsFrom(args, who.sessionId);
    if (typeof settings === 'string') return error(settings);
    let name: string | undefined;
    const newName = typeof args.new_name === 'string' ? args.new_name.trim() : undefined;
    if (newName && newName !== found.record.name) {
      try {
        await renameMission(this.client, this.taskQueue, {
          ownerId: found.record.ownerId,
          id: found.record.id,
          newName,
        });
      } catch (cause) {
        if (cause instanceof WorkflowUpdateFailedError) return error(refusalOf(cause));
        throw cause;
      }
      name = newName;
    }
    if (!name && !Object.keys(settings).length)
      return error(
        'nothing to change: pass new_name, goal, cadence, timezone, notify, notify_mode or shared',
      );
    await this.sealed.workflow
      .getHandle(missionWorkflowId(found.record.id))
      .signal(updateMissionSignal, { by: who.userId, ...(name ? { name } : {}), settings });
    const changed = [
      ...(name ? [`renamed to "${name}"`] : []),
      ...Object.keys(settings).filter((key) => key !== 'ownerSessionId'),
    ];
    return ok(`Updated mission "${found.record.name}": ${changed.join(', ')}.`);
  }

  private describe(view: MissionView): string {
    const lines = [
      `Mission "${view.name}" — ${view.status}${view.reason ? `: ${view.reason}` : ''}`,
      `Owner: @${view.ownerId}${view.settings.shared ? ' (shared: others may see it and run it as written; its runs act as the owner)' : ''}`,
      `Goal: ${view.settings.goal}`,
      `Cadence: ${describeCadence(view.settings.cadence)}${view.nextFireAt ? `; next run ${readableTime(view.nextFireAt, Date.now())}` : ''}`,
      `Notify: ${view.settings.notifySessionId ? 'the conversation it was created in' : 'none'} (${view.settings.notifyMode})`,
    ];
    const runNumber = (workflowId: string) => view.runs.find((r) => r.workflowId === workflowId)?.n ?? '?';
    if (view.gate) lines.push(`Waiting: run ${runNumber(view.gate.runWorkflowId)} needs ${view.gate.needed}`);
    if (view.running) lines.push(`Running now: run ${runNumber(view.running)}`);
    for (const run of view.runs.slice(-5))
      lines.push(
        `Run ${run.n} (${run.trigger}${run.firedBy ? ` by @${run.firedBy}` : ''}, ${readableTime(run.startedAt, Date.now())}): ${run.outcome ?? 'running'}${run.summary ? ` — ${run.summary}` : ''}`,
      );
    for (const skip of view.skipped.slice(-3))
      lines.push(`Skipped ${readableTime(skip.at, Date.now())}: ${skip.reason}`);
    return lines.join('\n');
  }
}

/** A UUID (version 8, RFC 9562) made from a key: the same key, the same mission id. */
export function uuidOf(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * A shared mission has one owner who decides: only they change, pause, resume or complete it, and its runs act
 * as them. Others may see it and run it as its owner wrote it, but may not add instructions (`context`) to a run
 * that acts with the owner's grants and credentials. Undefined: allowed.
 */
export function ownerRefusal(
  op: MissionOp,
  record: MissionRecord,
  userId: string,
  args: Record<string, unknown>,
): string | undefined {
  if (record.ownerId === userId || isReadOnlyMissionOp(op)) return undefined;
  const label = `"${record.name}"`;
  if (op === 'fire') {
    if (typeof args.context !== 'string' || !args.context.trim()) return undefined;
    return `${label} belongs to @${record.ownerId} and its runs act as them, so only they may add context to a run. mission_fire ${label} without context runs it as written.`;
  }
  const verb = op === 'update' ? 'change' : op;
  return `${label} belongs to @${record.ownerId}: only they may ${verb} it (its runs act as them). You may see it with mission_get and run it as written with mission_fire.`;
}

/** Why a fire would start no run (the mission would only record a skip), in words; undefined if it would. */
export function fireRefusal(view: MissionView, now: number): string | undefined {
  const label = `"${view.name}"`;
  const because = view.reason ? ` (${view.reason})` : '';
  if (view.status === 'completed') return `${label} is completed${because}: it will not run again.`;
  if (view.status === 'paused' || view.status === 'failed')
    return `${label} is ${view.status}${because}, so no run starts. mission_resume ${label} makes it active again.`;
  if (view.running) {
    const n = view.runs.find((r) => r.workflowId === view.running)?.n;
    return `${label} is still running (run ${n ?? '?'}), so no second run starts; mission_get shows how it goes.`;
  }
  const { maxRunsPerDay, cooldownMs } = view.guardrails;
  if (view.runs.filter((r) => r.startedAt > now - 24 * 3_600_000).length >= maxRunsPerDay)
    return `${label} already ran ${maxRunsPerDay} times in the last 24 hours (the policy's missions.maxRunsPerDay), so no run starts.`;
  const last = view.runs.at(-1);
  if (last && now - last.startedAt < cooldownMs)
    return `${label} ran less than ${Math.round(cooldownMs / 1000)} s ago (the policy's missions.cooldown), so no run starts yet.`;
  return undefined;
}

/**
 * A completed mission's workflow has ended: it takes no change, pause, resume or second completion (reading it and
 * a fire, which explains itself, still work). Undefined: allowed.
 */
export function completedRefusal(op: MissionOp, record: MissionRecord): string | undefined {
  if (record.status !== 'completed' || isReadOnlyMissionOp(op) || op === 'fire') return undefined;
  return `"${record.name}" is completed: it will not run again, and a completed mission cannot be ${op === 'update' ? 'changed' : `${op}d`}. mission_create makes a new one (the name is free again).`;
}

/** mission_history: the latest runs, newest first, with what started them, how long they took and who decided what. */
export function runHistory(view: MissionView, last: number): string {
  const runs = view.runs.slice(-last).reverse();
  if (!runs.length) return `Mission "${view.name}" has not run yet.`;
  const lines = [
    `Mission "${view.name}": the latest ${runs.length} run${runs.length === 1 ? '' : 's'}, newest first`,
  ];
  for (const run of runs) {
    const started = new Date(run.startedAt).toISOString().replace('T', ' ').slice(0, 16);
    const took =
      run.endedAt === undefined ? 'still running' : `took ${duration(run.endedAt - run.startedAt)}`;
    const how = `${run.trigger}${run.firedBy ? ` by @${run.firedBy}` : ''}`;
    lines.push(
      `Run ${run.n}: ${started} UTC, ${how}, ${took}: ${run.outcome ?? 'running'}${run.summary ? ` — ${oneLine(run.summary)}` : ''}`,
    );
    for (const decision of run.decisions ?? [])
      lines.push(`  ${decision.tool}: ${decision.outcome} by @${decision.by}`);
  }
  return lines.join('\n');
}

/** A run's answer on one line of the listing (its first 200 characters). */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}

function duration(ms: number): string {
  if (ms < 60_000) return `${Math.max(1, Math.round(ms / 1000))} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/**
 * "Sun 29 Nov 2026, 16:00 UTC (in 12 minutes)": what a person reads (the model passes mission times on as they are),
 * in UTC as every time the agent writes, with how far it is from now.
 */
export function readableTime(at: number, now: number): string {
  const date = new Date(at);
  const day = date.toLocaleDateString('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  });
  const minutes = Math.round((at - now) / 60_000);
  const span = Math.abs(minutes);
  const amount =
    span < 1
      ? 'now'
      : span < 90
        ? `${span} minute${span === 1 ? '' : 's'}`
        : span < 36 * 60
          ? `${Math.round(span / 60)} hours`
          : `${Math.round(span / 1_440)} days`;
  const relative = amount === 'now' ? 'now' : minutes > 0 ? `in ${amount}` : `${amount} ago`;
  return `${day.replace(/,/g, '')}, ${date.toISOString().slice(11, 16)} UTC (${relative})`;
}

/** The seal of a mission's creation: made by the worker as its owner's mission tool created it, over what it was given. */
function creationSeal(key: string, input: MissionInput) {
  const call = missionCreationCall(input);
  return sealSignal(key, sealedCall(call.signal, missionWorkflowId(input.id), call.payload));
}

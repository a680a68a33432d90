/**
 * The mission (routine) tools as the model sees them. Models address missions by name; `id` is accepted
 * as a legacy alternative, and a bare argument (a string instead of an object) is taken as a name.
 * `routine_*` are aliases with identical behaviour. Executed by activities/missions.ts.
 */
import { z } from 'zod';
import { sharedSchemas } from '../shared-schemas';
import type { ArgsSchema, ToolDefinition } from './tool-definition';

const oneString = (value: unknown): value is [string] =>
  Array.isArray(value) && value.length === 1 && typeof value[0] === 'string';

/**
 * A positional mission name: a bare string, a one-element array, or the legacy `{"_args": ["name"]}`
 * (with any other arguments beside it).
 */
const positional = (value: unknown) => {
  if (typeof value === 'string') return { mission: value };
  if (oneString(value)) return { mission: value[0] };
  if (value && typeof value === 'object' && '_args' in value && oneString(value._args)) {
    const { _args: args, ...rest } = value as { _args: [string] } & Record<string, unknown>;
    return { ...rest, mission: args[0] };
  }
  return value;
};

const schemas = sharedSchemas('mission-tools', () => {
  const name = z.string().trim().min(1).max(80).describe('The mission name, unique among your missions');
  const address = {
    name: name.optional(),
    id: z.string().trim().min(1).max(64).optional().describe('Legacy: the mission id; prefer the name'),
    mission: z.string().trim().min(1).max(80).optional().describe('Same as name'),
  };
  const cadence = z
    .string()
    .trim()
    .min(1)
    .max(120)
    .describe(
      '"manual", "webhook", or a cron expression such as "0 9 * * 1-5" (minute hour day month weekday)',
    );
  const settings = {
    goal: z.string().trim().min(1).max(4_000).optional().describe('What each run should find out or do'),
    cadence: cadence.optional(),
    timezone: z
      .string()
      .max(64)
      .optional()
      .describe('IANA time zone for the cron expression, e.g. "Europe/Paris"'),
    notify: z
      .string()
      .max(300)
      .optional()
      .describe('Where results go: "here" (this conversation, the default) or "none"'),
    notify_mode: z
      .enum(['always', 'notable'])
      .optional()
      .describe('"notable": only tell when a run found something worth telling'),
    shared: z
      .boolean()
      .optional()
      .describe('Let everyone see it and run it as written (only you change it; its runs act as you)'),
  };

  const create = z.strictObject({
    name,
    goal: z.string().trim().min(1).max(4_000).describe('What each run should find out or do'),
    cadence,
    timezone: settings.timezone,
    notify: settings.notify,
    notify_mode: settings.notify_mode,
    shared: settings.shared,
  });
  const addressed = z.preprocess(positional, z.strictObject(address));
  const fire = z.preprocess(
    positional,
    z.strictObject({
      ...address,
      context: z.string().max(4_000).optional().describe('Extra input for this run'),
    }),
  );
  const reason = z.preprocess(
    positional,
    z.strictObject({ ...address, reason: z.string().max(500).optional() }),
  );
  const update = z.preprocess(
    positional,
    z.strictObject({
      ...address,
      new_name: name.optional().describe('Rename the mission to this'),
      ...settings,
    }),
  );
  const history = z.preprocess(
    positional,
    z.strictObject({
      ...address,
      last: z.number().int().min(1).max(20).optional().describe('How many of the latest runs to show (10)'),
    }),
  );
  return { create, addressed, fire, reason, update, history, none: z.strictObject({}) };
});
export const missionCreateSchema = schemas.create;
export const missionAddressSchema = schemas.addressed;
export const missionFireSchema = schemas.fire;
export const missionReasonSchema = schemas.reason;
export const missionUpdateSchema = schemas.update;

type Op = 'create' | 'list' | 'get' | 'history' | 'fire' | 'pause' | 'resume' | 'complete' | 'update';

const SPECS: Record<Op, { schema: ArgsSchema; description: string }> = {
  create: {
    schema: missionCreateSchema,
    description:
      'Create a mission: a goal the agent pursues on a schedule (cron with time zone), on request ("manual") or on webhook calls; results are posted here.',
  },
  list: {
    schema: schemas.none,
    description: 'List your missions (and shared ones) with status and cadence.',
  },
  get: {
    schema: missionAddressSchema,
    description: 'Show one mission: status, cadence, recent runs, what it waits for.',
  },
  history: {
    schema: schemas.history,
    description:
      "Show a mission's latest runs: when and how each started (and by whom), how long it took, its outcome, and who decided each of its approvals and questions.",
  },
  fire: { schema: missionFireSchema, description: 'Run a mission now.' },
  pause: { schema: missionReasonSchema, description: 'Pause a mission: no scheduled runs until resumed.' },
  resume: {
    schema: missionReasonSchema,
    description: 'Resume a paused or failed mission (clears the recorded gate and failure count).',
  },
  complete: { schema: missionReasonSchema, description: 'Mark a mission completed: it stops for good.' },
  update: {
    schema: missionUpdateSchema,
    description:
      'Change a mission: new_name to rename, goal, cadence, timezone, notify, notify_mode, shared.',
  },
};

export const MISSION_OPS = Object.keys(SPECS) as Op[];
export type MissionOp = Op;

/** Operations that only look (anyone a mission is shared with may use them; they change nothing). */
export function isReadOnlyMissionOp(op: Op): boolean {
  return op === 'list' || op === 'get' || op === 'history';
}

/**
 * Operations the mission tools make safe to run again with the same idempotency key: a create makes the mission
 * whose id comes from the key (its directory record and its workflow, each once), and a fire carries the key as
 * its fire id, which the mission takes once. Cut off by a kill, they are run again until they answer.
 */
export function isRepeatableMissionOp(op: Op): boolean {
  return op === 'create' || op === 'fire';
}

function missionTool(prefix: 'mission' | 'routine', op: Op): MissionTool {
  const spec = SPECS[op];
  return {
    op,
    definition: {
      name: `${prefix}_${op}`,
      description: prefix === 'routine' ? `Alias of mission_${op}. ${spec.description}` : spec.description,
      schema: spec.schema,
      defaultPolicy: () => 'auto',
      subject: (args) => String(args.name ?? args.mission ?? args.id ?? (op === 'list' ? 'all' : '')),
    },
  };
}

/** A mission tool and the operation it performs (`routine_fire` performs `fire`). */
export interface MissionTool {
  readonly op: Op;
  readonly definition: ToolDefinition;
}

export const missionToolsByOp: readonly MissionTool[] = (['mission', 'routine'] as const).flatMap((prefix) =>
  MISSION_OPS.map((op) => missionTool(prefix, op)),
);

/**
 * The policy entry that governs a tool: `routine_*` follow their `mission_*` originals unless the policy
 * names the alias itself, so a rule on `mission_fire` cannot be bypassed by calling `routine_fire`.
 */
export function policyEntryName(toolName: string, configured: Readonly<Record<string, unknown>>): string {
  if (!toolName.startsWith('routine_') || toolName in configured) return toolName;
  const original = `mission_${toolName.slice('routine_'.length)}`;
  return MISSION_OPS.some((op) => `mission_${op}` === original) ? original : toolName;
}

export const missionTools: readonly ToolDefinition[] = missionToolsByOp.map((tool) => tool.definition);

/**
 * Tool results written entirely by this runtime (a mission changed, the time, a person's own answers): nothing a
 * web page, a file or a webhook body could have put there. Any other tool's result in a conversation is content
 * that may steer the model.
 */
export function resultIsOwnText(toolName: string): boolean {
  if (toolName === 'current_time' || toolName === 'ask_user') return true;
  const op = /^(?:mission|routine)_(\w+)$/.exec(toolName)?.[1];
  // mission_get shows runs' summaries, as a mission's report in its owner's conversation does: the owner's own
  // mission's output, counted as theirs (docs/SECURITY.md says what remains).
  return op !== undefined && MISSION_OPS.some((known) => known === op);
}

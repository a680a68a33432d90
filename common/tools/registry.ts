/**
 * The one place a tool's name decides what kind of tool it is. Pure and small (the definitions it reads are
 * already in the workflow bundle), so the session workflow — which checks arguments, turns ask_user into a
 * question gate and handles mcp_refresh itself — and the worker, which plans and runs the other calls
 * (activities/tools/registry.ts), resolve every name the same way.
 */
import type { AskUserArgs } from './ask-user';
import {
  askUserTool,
  builtinTools,
  checkToolArgs,
  currentTimeTool,
  httpRequestTool,
  shellExecuteTool,
  type ToolDefinition,
} from './definitions';
import {
  MCP_REFRESH_TOOL,
  MCP_SEPARATOR,
  mcpDefaultPolicy,
  mcpToolDefinition,
  splitMcpName,
  type McpToolSpec,
} from './mcp';
import { isReadOnlyMissionOp, isRepeatableMissionOp, missionToolsByOp, type MissionOp } from './missions';

/** The tools the worker runs with an executor of its own. */
const executed = [shellExecuteTool, httpRequestTool, currentTimeTool] as const;
export type BuiltinName = (typeof executed)[number]['name'];

/**
 * What running a call twice would do. `read-only` calls may be retried freely; `repeatable` calls change
 * something, but their executor makes a second run with the same idempotency key the first one (so an attempt
 * cut off is run again until it answers); a call with `side-effects` runs at most once: an attempt cut off after
 * it may have started is reported, never repeated.
 */
export type ToolEffect = 'read-only' | 'repeatable' | 'side-effects';

const builtinEffects: { readonly [Name in BuiltinName]: (args: Record<string, unknown>) => ToolEffect } = {
  shell_execute: () => 'side-effects',
  // The schema's default method is GET.
  http_request: (args) =>
    args.method === undefined || args.method === 'GET' || args.method === 'HEAD'
      ? 'read-only'
      : 'side-effects',
  current_time: () => 'read-only',
};

export type ToolEntry =
  /** shell_execute, http_request, current_time: planned by the policy, run by the worker's executor. */
  | { kind: 'builtin'; name: BuiltinName; definition: ToolDefinition }
  /** ask_user: the session opens a question gate whatever the policy says; it never runs. */
  | { kind: 'question'; name: string; definition: typeof askUserTool }
  /** mission_* and routine_*: planned by the policy, run by the mission tools. */
  | { kind: 'mission'; name: string; definition: ToolDefinition; op: MissionOp }
  /** `<server>__<tool>`: planned and run through the server's connection; defined by discovery. */
  | { kind: 'mcp'; name: string; server: string; tool: string }
  /** mcp_refresh: the session looks at the tool servers again; nothing is planned or run. */
  | { kind: 'mcp_refresh'; name: string }
  | { kind: 'unknown'; name: string };

export type ToolKind = ToolEntry['kind'];

/** What kind of tool `name` is. Every other place asks this function; none looks at the name itself. */
export function resolveTool(name: string): ToolEntry {
  const builtin = executed.find((definition) => definition.name === name);
  if (builtin) return { kind: 'builtin', name: builtin.name, definition: builtin };
  if (name === askUserTool.name) return { kind: 'question', name, definition: askUserTool };
  const mission = missionToolsByOp.find((tool) => tool.definition.name === name);
  if (mission) return { kind: 'mission', name, definition: mission.definition, op: mission.op };
  if (name === MCP_REFRESH_TOOL.name) return { kind: 'mcp_refresh', name };
  const mcp = splitMcpName(name);
  if (mcp) return { kind: 'mcp', name, ...mcp };
  return { kind: 'unknown', name };
}

/** What one session can call: its MCP tools once discovered, mcp_refresh where servers are configured. */
export interface SessionTools {
  mcpTools?: readonly McpToolSpec[] | undefined;
  mcpServers?: readonly string[] | undefined;
}

/**
 * A tool that takes arguments, as the session sees it (an MCP tool with the definition discovery gave it and
 * its `readOnlyHint`).
 */
export type CallableTool =
  | Extract<ToolEntry, { kind: 'builtin' | 'question' | 'mission' }>
  | (Extract<ToolEntry, { kind: 'mcp' }> & { definition: ToolDefinition; readOnly: boolean });

export type SessionTool =
  | CallableTool
  | Extract<ToolEntry, { kind: 'mcp_refresh' }>
  | { kind: 'unknown'; name: string; error: string };

/** Resolves a model's call in a session; an unknown tool comes with the error the model reads. */
export function sessionTool(name: string, session: SessionTools): SessionTool {
  const entry = resolveTool(name);
  switch (entry.kind) {
    case 'mcp': {
      const spec = session.mcpTools?.find((tool) => tool.name === name);
      if (spec)
        return {
          ...entry,
          definition: mcpToolDefinition(spec, mcpDefaultPolicy(spec)),
          readOnly: spec.readOnly,
        };
      // Its server offers only `connect` now (the person's sign-in lapsed): say what to call first.
      const connect = `${entry.server}${MCP_SEPARATOR}connect`;
      const offered = session.mcpTools?.filter((tool) => tool.server === entry.server) ?? [];
      if (entry.tool !== 'connect' && offered.length === 1 && offered[0]!.name === connect)
        return {
          kind: 'unknown',
          name,
          error: `"${name}" is not available until the user signs in to the "${entry.server}" tool server again: call ${connect} first (it asks them), then call ${name} again.`,
        };
      break;
    }
    case 'mcp_refresh':
      if (session.mcpServers?.length) return entry;
      break;
    case 'unknown':
      break;
    default:
      return entry;
  }
  const known = [...builtinTools, ...(session.mcpTools ?? [])].map((tool) => tool.name).join(', ');
  return { kind: 'unknown', name, error: `unknown tool "${name}". Available tools: ${known}.` };
}

/** Whether `tool` called with `args` may run twice; anything this registry cannot vouch for has side effects. */
export function toolEffect(tool: SessionTool, args: Record<string, unknown>): ToolEffect {
  switch (tool.kind) {
    case 'builtin':
      return builtinEffects[tool.name](args);
    case 'mission':
      return isReadOnlyMissionOp(tool.op)
        ? 'read-only'
        : isRepeatableMissionOp(tool.op)
          ? 'repeatable'
          : 'side-effects';
    case 'mcp':
      return tool.readOnly ? 'read-only' : 'side-effects';
    case 'question':
    case 'mcp_refresh':
      return 'read-only';
    case 'unknown':
      return 'side-effects';
  }
}

/** A call whose arguments passed its tool's schema, typed by kind (ask_user's are its questions). */
export type CheckedCall =
  | { ok: true; kind: 'question'; definition: ToolDefinition; args: AskUserArgs }
  | {
      ok: true;
      kind: 'builtin' | 'mission' | 'mcp';
      definition: ToolDefinition;
      args: Record<string, unknown>;
    }
  | { ok: false; error: string };

export function checkCall(tool: CallableTool, args: unknown): CheckedCall {
  // One branch per schema type, so each kind's arguments keep their type without a cast.
  if (tool.kind === 'question') {
    const checked = checkToolArgs(tool.definition, args);
    return checked.ok
      ? { ok: true, kind: tool.kind, definition: tool.definition, args: checked.args }
      : checked;
  }
  const checked = checkToolArgs(tool.definition, args);
  return checked.ok
    ? { ok: true, kind: tool.kind, definition: tool.definition, args: checked.args }
    : checked;
}

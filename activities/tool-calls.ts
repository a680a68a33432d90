/**
 * How the worker plans (tool-plans.ts) and runs a tool call, by the kind common/tools/registry.ts gives its name.
 * Running: each kind with its own executor; built-ins with their credential and sandbox. The workflow history is the
 * ledger: whatever fails before a side effect could start is thrown as `ToolNotStarted` (the workflow may run
 * the call again); a run cut off by the worker's shutdown is thrown as `ToolInterrupted` (never run again).
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import type { AppConfig } from '../infra/config';
import type { CredentialService } from '../infra/credentials/service';
import { FailureType } from '../common/errors';
import { resolveTool, type ToolEntry } from '../common/tools/registry';
import { ToolPlanner } from './tool-plans';
import type { UserGrants } from './grants';
import { withHeartbeat } from './heartbeat';
import type { McpPool } from './mcp/pool';
import type { MissionTools } from './missions';
import { redact } from './tools/redact';
import { sessionWorkdir } from './tools/shell';
import { builtins, type BuiltinTool, type ToolContext } from './tools/registry';
import type { SandboxStatus } from './tools/sandbox';
import { authorizeTool } from './tool-credentials';
import type { ToolPlan, ToolPlanRequest, ToolRunRequest, ToolRunResult } from './types';

export interface ToolCallDeps {
  config: AppConfig;
  mcp: McpPool;
  missions: MissionTools;
  userGrants: UserGrants;
  credentials: () => CredentialService;
  /** The sandbox as probed at worker start (or on first use). */
  sandbox: () => Promise<SandboxStatus>;
}

type McpEntry = Extract<ToolEntry, { kind: 'mcp' }>;

/** Runs what comes before a tool's side effect: any failure there is `ToolNotStarted`, so nothing ran. */
async function beforeStart<T>(toolName: string, prepare: () => Promise<T>): Promise<T> {
  try {
    return await prepare();
  } catch (error) {
    throw notStarted(toolName, error);
  }
}

function notStarted(toolName: string, error: unknown, options: { nonRetryable?: boolean } = {}) {
  return ApplicationFailure.create({
    type: FailureType.ToolNotStarted,
    message: `${toolName} could not start (${error instanceof Error ? error.message : String(error)}); nothing ran`,
    cause: error instanceof Error ? error : undefined,
    nonRetryable: options.nonRetryable ?? false,
  });
}

/**
 * Runs the side effect with heartbeats. Cut off by the worker's shutdown (a deploy) or a cancellation, an
 * executor may still return a result ("aborted"), but the effect may have happened: that is an interruption.
 */
async function sideEffect(
  toolName: string,
  run: (signal: AbortSignal) => Promise<ToolRunResult>,
): Promise<ToolRunResult> {
  return await withHeartbeat(async (signal) => {
    const result = await run(signal);
    // Retryable as far as the worker knows: a read-only call's retry policy tries it again; one with side
    // effects has a single attempt, so the workflow reports it as interrupted.
    if (signal.aborted)
      throw ApplicationFailure.retryable(
        signal.reason instanceof CancelledFailure && signal.reason.message === 'WORKER_SHUTDOWN'
          ? `its worker shut down while ${toolName} ran`
          : `${toolName} was cancelled while it ran`,
        FailureType.ToolInterrupted,
      );
    return result;
  });
}

export function createToolCalls(deps: ToolCallDeps) {
  const { config, mcp, missions, userGrants, credentials } = deps;
  const planner = new ToolPlanner(config, mcp, userGrants);

  async function runMcp(entry: McpEntry, request: ToolRunRequest): Promise<ToolRunResult> {
    const userId = request.userId ?? '';
    const early = await beforeStart(request.toolName, () => mcp.precheck(entry.server, entry.tool, userId));
    if (early) return early;
    return await sideEffect(request.toolName, (signal) =>
      mcp.call(entry.server, entry.tool, request.args, userId, signal, request.inputs),
    );
  }

  async function runBuiltin(tool: BuiltinTool, request: ToolRunRequest): Promise<ToolRunResult> {
    const { toolName } = request;
    // The workflow checked the arguments; an edit or an older history that does not parse never runs.
    const parsed = tool.definition.schema.safeParse(request.args);
    if (!parsed.success)
      throw notStarted(toolName, new Error(`invalid arguments: ${z.prettifyError(parsed.error)}`), {
        nonRetryable: true,
      });
    const providerName = tool.definition.credential?.(request.args);
    let authorization: ToolContext['authorization'];
    if (providerName) {
      const checked = await beforeStart(toolName, () =>
        authorizeTool(credentials(), request.userId ?? '', providerName, { toApiHostsOnly: true }),
      );
      if (!checked.ok) return checked.result;
      const { header, value, apiHosts } = checked;
      authorization = { provider: providerName, header, value, apiHosts };
    }
    const shell = tool.sandboxed
      ? {
          status: await beforeStart(toolName, () => deps.sandbox()),
          network: config.policy.tools[tool.definition.name]?.network ?? 'none',
          // "full" goes out through a proxy applying http_request's address policy (egress-proxy.ts).
          egress: { allowHosts: config.policy.allowHosts, denyHosts: config.policy.denyHosts },
        }
      : undefined;
    // The conversation's working directory exists before anything runs: a disk that refuses it means
    // nothing ran (retried, then "not run"), not "may or may not have run".
    if (tool.sandboxed)
      await beforeStart(toolName, async () => sessionWorkdir(config.dataDir, request.sessionId));
    return await sideEffect(toolName, async (signal) =>
      redact(
        await tool.execute(request.args, {
          dataDir: config.dataDir,
          sessionId: request.sessionId,
          idempotencyKey: request.idempotencyKey,
          signal,
          ...(shell ? { shell } : {}),
          addressPolicy: config.policy,
          ...(authorization ? { authorization } : {}),
        }),
        authorization?.value,
      ),
    );
  }

  return {
    async plan(request: ToolPlanRequest): Promise<ToolPlan> {
      return await planner.plan(request);
    },

    async run(request: ToolRunRequest): Promise<ToolRunResult> {
      const entry = resolveTool(request.toolName);
      switch (entry.kind) {
        case 'builtin':
          return await runBuiltin(builtins[entry.name], request);
        case 'mission':
          return await sideEffect(request.toolName, () =>
            missions.run(entry.op, request.args, {
              userId: request.userId ?? '',
              sessionId: request.sessionId,
              idempotencyKey: request.idempotencyKey,
            }),
          );
        case 'mcp':
          return await runMcp(entry, request);
        case 'question':
        case 'mcp_refresh':
        case 'unknown':
          // The session handles ask_user and mcp_refresh itself; neither ever reaches a worker as a run.
          return { status: 'error', content: `no executor for ${request.toolName}` };
      }
    },
  };
}

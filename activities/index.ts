/**
 * Every side effect of a session: model calls, the policy check (reads configuration and grants), tool
 * runs (through the idempotency ledger) and grant storage. Created once per worker with its dependencies.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { AppConfig } from '../common/config';
import type { Grant } from '../common/grants';
import { approvalRulesFor, grantsMayApply, type ApprovalRules } from '../common/approval-rules';
import { decidePolicy } from '../common/policy';
import { findTool, shellExecuteTool } from '../common/tools/definitions';
import type { Message } from '../workflows/session/contract';
import type { DeliveryRequest, DeliveryResult } from '../workflows/session/outbound';
import { CredentialService } from '../common/credentials/service';
import { createDeliver } from './deliver';
import { MissionTools, nextCronTime } from './missions';
import { missionOpOf } from '../common/tools/missions';
import { splitMcpName, type McpDiscovery } from '../common/tools/mcp';
import { McpPool } from './mcp/pool';
import { z } from 'zod';
import { parseShellCommand } from './tools/parse-shell';
import { redact } from './tools/redact';
import { authorizeTool } from './tool-credentials';
import { UserGrants } from './grants';
import { previousRunTranscript } from './previous-run';
import { withHeartbeat } from './heartbeat';
import { createModel } from './model';
import { executors, type ToolContext } from './tools/registry';
import type { ToolRunLedger } from './tools/ledger';
import type { SandboxStatus } from './tools/sandbox';
import { probeSandbox } from './tools/sandbox-probe';
import type {
  ModelReply,
  ModelRequest,
  SessionSettings,
  ToolPlan,
  ToolPlanRequest,
  ToolRunRequest,
  ToolRunResult,
} from './types';

export interface ActivityDeps {
  config: AppConfig;
  client: Client;
  ledger: ToolRunLedger;
  /** MCP connections; the worker passes its own so it can close them (and their processes) on shutdown. */
  mcp?: McpPool;
  /** The vault and providers, opened on first use (shared with `mcp`). */
  credentials?: () => CredentialService;
  /** shell_execute's sandbox as probed at worker start; without it, probed on first use. */
  sandbox?: Promise<SandboxStatus>;
}

export function createActivities(deps: ActivityDeps) {
  const { config, client, ledger } = deps;
  const complete = createModel(config);
  const userGrants = new UserGrants(client, config.temporal.taskQueue);
  const deliverToPlatform = createDeliver(config);
  const missions = new MissionTools(client, config);
  const shellSandbox = async () => ({
    status: await (deps.sandbox ?? probeSandbox(config.policy.sandbox)),
    network: config.policy.tools[shellExecuteTool.name]?.network ?? 'none',
  });
  const mcp = deps.mcp ?? new McpPool(config.policy.mcpServers, () => credentials());
  const plan = (
    decision: { decision: ToolPlan['decision']; reason: string },
    timeoutMs: ToolPlan['timeoutMs'],
    rules: ApprovalRules,
  ): ToolPlan => ({
    decision: decision.decision,
    reason: decision.reason,
    approvers: rules.approvers,
    timeoutMs,
    ...(grantsMayApply(rules) ? {} : { selfApprove: rules.selfApprove, approvals: rules.approvals }),
  });
  /** Standing grants never stand in for four-eyes or a quorum. */
  const grantsFor = async (request: ToolPlanRequest, rules: ApprovalRules) =>
    grantsMayApply(rules) ? [...request.sessionGrants, ...(await userGrants.list(request.userId))] : [];
  // Opened on first use, so workers without credential tools never create a vault or key file.
  let credentialService: CredentialService | undefined;
  const credentials =
    deps.credentials ?? (() => (credentialService ??= CredentialService.fromConfig(config)));

  return {
    async callModel(request: ModelRequest): Promise<ModelReply> {
      return await withHeartbeat((signal) => complete(request.transcript, signal, request.extraTools ?? []));
    },

    async loadSettings(): Promise<SessionSettings> {
      return {
        maxSteps: config.policy.maxSteps,
        continueAsNewAfterEvents: config.policy.continueAsNewAfterEvents,
        approvers: config.policy.approvers,
        questionTimeoutMs: config.policy.questionTimeout,
        ...(config.policy.reminderAfter === 'never' ? {} : { reminderAfterMs: config.policy.reminderAfter }),
        credentialTimeoutMs: config.policy.credentialTimeout,
        ...(mcp.configured.length
          ? { mcpServers: mcp.configured, mcpRefreshAfterMs: config.policy.mcpRefreshAfter }
          : {}),
      };
    },

    async planToolCall(request: ToolPlanRequest): Promise<ToolPlan> {
      const mcpName = splitMcpName(request.toolName);
      const rules = approvalRulesFor(config.policy, request.toolName);
      if (!findTool(request.toolName) && mcpName && mcp.server(mcpName.server)) {
        const policy = await mcp.policy(mcpName.server, mcpName.tool, request.userId);
        const decision = decidePolicy({
          tool: {
            name: request.toolName,
            description: '',
            schema: z.unknown(),
            defaultPolicy: () => policy,
            subject: (args) => JSON.stringify(args),
          },
          args: request.args,
          // An explicit "deny" in configuration beats any grant.
          config: policy === 'deny' ? { policy, allow: [], deny: [] } : undefined,
          grants: await grantsFor(request, rules),
          userId: request.userId,
          sessionId: request.sessionId,
        });
        return plan(decision, config.policy.approvalTimeout, rules);
      }
      const tool = findTool(request.toolName);
      if (!tool)
        return {
          decision: 'deny',
          reason: `unknown tool ${request.toolName}`,
          approvers: [],
          timeoutMs: 'never',
        };
      const toolConfig = config.policy.tools[tool.name];
      const grants = await grantsFor(request, rules);
      const decision = decidePolicy({
        tool,
        args: request.args,
        config: toolConfig,
        grants,
        userId: request.userId,
        sessionId: request.sessionId,
        // The parser runs here, on the Node side: the policy itself stays pure.
        ...(tool.name === shellExecuteTool.name && typeof request.args.command === 'string'
          ? { shell: parseShellCommand(request.args.command) }
          : {}),
        defaults: rules,
      });
      return plan(decision, toolConfig?.approvalTimeout ?? config.policy.approvalTimeout, rules);
    },

    async runTool(request: ToolRunRequest): Promise<ToolRunResult> {
      const mcpName = !findTool(request.toolName) ? splitMcpName(request.toolName) : undefined;
      if (mcpName) {
        const early = await mcp.precheck(mcpName.server, mcpName.tool, request.userId ?? '');
        if (early) return early;
        return await withHeartbeat((signal) =>
          ledger.runOnce(request.idempotencyKey, request.toolName, () =>
            mcp.call(mcpName.server, mcpName.tool, request.args, request.userId ?? '', signal),
          ),
        );
      }
      const missionOp = missionOpOf(request.toolName);
      if (missionOp)
        return await ledger.runOnce(request.idempotencyKey, request.toolName, () =>
          missions.run(missionOp, request.args, {
            userId: request.userId ?? '',
            sessionId: request.sessionId,
          }),
        );
      const execute = executors[request.toolName];
      if (!execute) return { status: 'error', content: `no executor for ${request.toolName}` };
      const tool = findTool(request.toolName);
      const providerName = tool?.credential?.(request.args as never);
      let authorization: ToolContext['authorization'];
      if (providerName) {
        const checked = await authorizeTool(credentials(), request.userId ?? '', providerName, {
          toApiHostsOnly: true,
        });
        if (!checked.ok) return checked.result;
        const { header, value, apiHosts } = checked;
        authorization = { provider: providerName, header, value, apiHosts };
      }
      return await withHeartbeat((signal) =>
        ledger.runOnce(request.idempotencyKey, request.toolName, async () =>
          redact(
            await execute(request.args, {
              dataDir: config.dataDir,
              sessionId: request.sessionId,
              signal,
              shell: await shellSandbox(),
              addressPolicy: config.policy,
              ...(authorization ? { authorization } : {}),
            }),
            authorization?.value,
          ),
        ),
      );
    },

    /** The transcript of this session's most recent closed run (terminated, failed, ...), or none. */
    async loadPreviousTranscript(): Promise<Message[]> {
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      return workflowId ? await previousRunTranscript(client, workflowId) : [];
    },

    async deliver(request: DeliveryRequest): Promise<DeliveryResult> {
      return await deliverToPlatform(request);
    },

    /** The tools of every configured MCP server for this person; servers that are down are reported. */
    async discoverMcpTools(request: { userId: string }): Promise<McpDiscovery> {
      return await mcp.discover(request.userId);
    },

    async nextFireTime(request: {
      expression: string;
      timezone: string;
      after: number;
    }): Promise<number | null> {
      return nextCronTime(request.expression, request.timezone, request.after);
    },

    async saveUserGrant(grant: Grant): Promise<void> {
      await userGrants.add(grant);
    },
  };
}

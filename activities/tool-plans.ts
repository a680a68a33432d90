/**
 * How the worker plans a tool call, by the kind common/tools/registry.ts gives its name: the policy with the
 * tool's approval rules and grants; an MCP tool with its server's policy and any top-level entry (the stricter
 * wins); a mission change steered by content asks (planMission).
 */
import {
  approvalRulesFor,
  grantsMayApply,
  toolPolicyEntry,
  type ApprovalRules,
} from '../common/approval-rules';
import { decidePolicy, type PolicyDecision } from '../common/policy';
import type { ToolDefinition } from '../common/tools/definitions';
import { isReadOnlyMissionOp } from '../common/tools/missions';
import { mcpToolDefinition } from '../common/tools/mcp';
import { resolveTool, type ToolEntry } from '../common/tools/registry';
import { asPeople, type UsersTable } from '../common/identities';
import type { AppConfig } from '../infra/config';
import type { UserGrants } from './grants';
import type { McpPool } from './mcp/pool';
import { builtins, type BuiltinTool } from './tools/registry';
import { hostMatches, parseHostPattern } from './tools/host-patterns';
import type { ToolPlan, ToolPlanRequest } from './types';

type McpEntry = Extract<ToolEntry, { kind: 'mcp' }>;

const STRICTNESS: Record<PolicyDecision['decision'], number> = { auto: 0, ask: 1, deny: 2 };
/** The stricter of two policies (deny > ask > auto); an unset one counts for nothing. */
function stricter(a: PolicyDecision['decision'], b: PolicyDecision['decision'] | undefined) {
  return b !== undefined && STRICTNESS[b] > STRICTNESS[a] ? b : a;
}

function toPlan(decision: PolicyDecision, timeoutMs: ToolPlan['timeoutMs'], rules: ApprovalRules): ToolPlan {
  return {
    decision: decision.decision,
    reason: decision.reason,
    approvers: rules.approvers,
    timeoutMs,
    ...(grantsMayApply(rules) ? {} : { selfApprove: rules.selfApprove, approvals: rules.approvals }),
    ...(rules.escalate ? { escalate: rules.escalate } : {}),
  };
}

function unknownTool(name: string): ToolPlan {
  return { decision: 'deny', reason: `unknown tool ${name}`, approvers: [], timeoutMs: 'never' };
}

/**
 * One person, one vote, from any channel: an approver named in the policy's `users` (by name or by one of their ids)
 * may decide by any of their ids, and the gate learns which ids are one person (`people`, for the approvers, the
 * requester and the escalation's), so a quorum, four-eyes and "already approved" count people. Ids of nobody
 * listed stay as they are.
 */
export function withPeople(plan: ToolPlan, requesterId: string, users: UsersTable): ToolPlan {
  if (plan.decision !== 'ask') return plan;
  const { ids: approvers, people } = asPeople(plan.approvers, users);
  asPeople([requesterId], users, people);
  // Escalation brings people too: each may then decide by any of their ids, and counts once.
  const escalate = plan.escalate && {
    ...plan.escalate,
    to: asPeople(plan.escalate.to, users, people).ids,
  };
  return {
    ...plan,
    approvers,
    ...(escalate ? { escalate } : {}),
    ...(Object.keys(people).length ? { people } : {}),
  };
}

export class ToolPlanner {
  constructor(
    private readonly config: AppConfig,
    private readonly mcp: McpPool,
    private readonly userGrants: UserGrants,
  ) {}

  async plan(request: ToolPlanRequest): Promise<ToolPlan> {
    return withPeople(await this.planFor(request), request.userId, this.config.policy.users);
  }

  private async planFor(request: ToolPlanRequest): Promise<ToolPlan> {
    const entry = resolveTool(request.toolName);
    const rules = approvalRulesFor(this.config.policy, request.toolName);
    switch (entry.kind) {
      case 'builtin': {
        const builtin = builtins[entry.name];
        const carriesOut = this.carriesOut(entry.definition, request);
        // Whatever the policy says: a page read with someone's credential could be what asks for this request.
        if (carriesOut)
          return await this.askAPerson(entry.definition, request, rules, builtin, carriesOut, false);
        if (request.untrusted === 'shared-thread' && entry.definition.credential?.(request.args))
          return await this.askAPerson(
            entry.definition,
            request,
            rules,
            builtin,
            `others wrote in this thread, and this call uses @${request.userId}'s credential`,
          );
        return await this.byPolicy(entry.definition, request, rules, builtin);
      }
      case 'question':
        return await this.byPolicy(entry.definition, request, rules);
      case 'mission':
        return await this.mission(entry, request, rules);
      case 'mcp':
        return this.mcp.server(entry.server)
          ? await this.mcpTool(entry, request, rules)
          : unknownTool(entry.name);
      case 'mcp_refresh':
      case 'unknown':
        return unknownTool(entry.name);
    }
  }

  /** Standing grants never stand in for four-eyes or a quorum, nor for a mission change steered by content. */
  private async grantsFor(request: ToolPlanRequest, rules: ApprovalRules, standing = true) {
    return standing && grantsMayApply(rules)
      ? [...request.sessionGrants, ...(await this.userGrants.list(request.userId))]
      : [];
  }

  /**
   * A mission tool that changes something, called by a mission run or after tool results entered the turn: a
   * prompt-injected page or webhook body could be creating or rewriting a persistent mission. It asks by default
   * (no standing grant stands in); only the policy file relaxes it (`"mission_update": {"policy": "auto"}`).
   */
  private async mission(
    entry: Extract<ToolEntry, { kind: 'mission' }>,
    request: ToolPlanRequest,
    rules: ApprovalRules,
  ): Promise<ToolPlan> {
    const changes = !isReadOnlyMissionOp(entry.op);
    if (!changes || !request.untrusted) return await this.byPolicy(entry.definition, request, rules);
    const why =
      request.untrusted === 'mission-run'
        ? 'a mission run changes missions only with a person’s approval'
        : request.untrusted === 'shared-thread'
          ? 'others wrote in this thread, and what they wrote may be steering this mission change'
          : 'tool results came back in this turn, and what the model read may be steering this mission change';
    return await this.askAPerson(entry.definition, request, rules, undefined, why);
  }

  /**
   * A call something other than the requester may be steering (a mission run, tool results, others in a shared
   * thread, a credentialed read it could carry out): it asks by default and no standing grant stands in; the policy
   * file's own word for the tool relaxes it only where `policyMayRelax`, and may always deny it.
   */
  private async askAPerson(
    tool: ToolDefinition,
    request: ToolPlanRequest,
    rules: ApprovalRules,
    builtin: BuiltinTool | undefined,
    why: string,
    policyMayRelax = true,
  ): Promise<ToolPlan> {
    const guarded: ToolDefinition = { ...tool, defaultPolicy: () => 'ask' };
    const plan = await this.byPolicy(guarded, request, rules, builtin, false);
    if (plan.decision === 'deny' || (plan.decision === 'auto' && policyMayRelax)) return plan;
    if (plan.decision === 'ask' && plan.reason !== 'needs approval') return plan;
    // The tool's own approval timeout and rules stay; only the reason says why a person is asked.
    return { ...plan, decision: 'ask', reason: `needs approval: ${why}` };
  }

  /**
   * After a credentialed read, whether this call could carry what it returned out of the building: a request to a
   * host outside every such provider's `apiHosts`, or a command with the network. Says why, or undefined.
   */
  private carriesOut(tool: ToolDefinition, request: ToolPlanRequest): string | undefined {
    const providers = request.credentialedReads ?? [];
    if (!providers.length) return undefined;
    const read = providers.join(', ');
    if (tool.name === 'http_request') {
      let url: URL;
      try {
        url = new URL(String(request.args.url));
      } catch {
        return undefined; // the executor refuses it with its own words
      }
      const hosts = providers.flatMap((name) => this.config.policy.providers[name]?.apiHosts ?? []);
      if (hosts.some((host) => hostMatches(parseHostPattern(host), url))) return undefined;
      return `this conversation read with ${read} credentials, and this request goes to ${url.host}, outside their hosts`;
    }
    if (tool.name === 'shell_execute' && this.config.policy.tools[tool.name]?.network === 'full')
      return `this conversation read with ${read} credentials, and this command reaches the network`;
    return undefined;
  }

  private async mcpTool(entry: McpEntry, request: ToolPlanRequest, rules: ApprovalRules): Promise<ToolPlan> {
    const { config } = this;
    const serverPolicy = await this.mcp.policy(entry.server, entry.tool, request.userId);
    // A top-level `tools` entry for `<server>__<tool>` applies too; where both set a policy the stricter wins.
    const topLevel = toolPolicyEntry(config.policy.tools, entry.name);
    const policy = stricter(serverPolicy, topLevel?.policy);
    const decision = decidePolicy({
      tool: mcpToolDefinition({ name: entry.name, description: '' }, policy),
      args: request.args,
      // An explicit "deny" in configuration beats any grant.
      config:
        policy === 'deny' ? { policy, allow: [], deny: [] } : topLevel ? { ...topLevel, policy } : undefined,
      grants: await this.grantsFor(request, rules),
      userId: request.userId,
      sessionId: request.sessionId,
    });
    return toPlan(decision, config.policy.approvalTimeout, rules);
  }

  private async byPolicy(
    tool: ToolDefinition,
    request: ToolPlanRequest,
    rules: ApprovalRules,
    builtin?: BuiltinTool,
    standingGrants = true,
  ): Promise<ToolPlan> {
    const { config } = this;
    const toolConfig = toolPolicyEntry(config.policy.tools, tool.name);
    const shell = builtin?.parseCommand(request.args);
    const decision = decidePolicy({
      tool,
      args: request.args,
      config: toolConfig,
      grants: await this.grantsFor(request, rules, standingGrants),
      userId: request.userId,
      sessionId: request.sessionId,
      ...(shell ? { shell } : {}),
      defaults: rules,
    });
    return toPlan(decision, toolConfig?.approvalTimeout ?? config.policy.approvalTimeout, rules);
  }
}

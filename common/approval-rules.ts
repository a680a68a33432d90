/**
 * Who may approve a tool's calls, from the policy file: its approvers (a tool's own list replaces the
 * top-level one), whether the requester may approve their own call, and how many distinct approvals it needs.
 */
import { policyEntryName } from './tools/missions';

export interface ApprovalRules {
  approvers: string[];
  selfApprove: boolean;
  approvals: number;
  /** Who else is asked once an approval has waited `afterMs` undecided. */
  escalate?: { afterMs: number; to: string[] } | undefined;
}

/** The policy file's `escalate`, as parsed (infra/config.ts): `after` in ms (never "never" here). */
interface EscalateSetting {
  after: number | 'never';
  to: string[];
}

/** What the rules read of the policy file (its defaults and each tool's own), as infra/config.ts parses it. */
interface RulesSource {
  approvers: string[];
  selfApprove: boolean;
  approvals: number;
  escalate?: EscalateSetting | undefined;
  tools: Readonly<
    Record<
      string,
      {
        approvers?: string[] | undefined;
        selfApprove?: boolean | undefined;
        approvals?: number | undefined;
        escalate?: EscalateSetting | undefined;
      }
    >
  >;
}

/** A tool's entry in the policy file's `tools` (an alias follows its original: `routine_*` -> `mission_*`). */
export function toolPolicyEntry<T>(tools: Readonly<Record<string, T>>, toolName: string): T | undefined {
  return tools[policyEntryName(toolName, tools)];
}

export function approvalRulesFor(policy: RulesSource, toolName: string): ApprovalRules {
  const tool = toolPolicyEntry(policy.tools, toolName);
  const escalate = tool?.escalate ?? policy.escalate;
  return {
    approvers: tool?.approvers ?? policy.approvers,
    selfApprove: tool?.selfApprove ?? policy.selfApprove,
    approvals: tool?.approvals ?? policy.approvals,
    ...(escalate ? { escalate: { afterMs: escalate.after as number, to: escalate.to } } : {}),
  };
}

/** Four-eyes or quorum: what an always-allow grant must never skip. */
export function grantsMayApply(rules: ApprovalRules): boolean {
  return rules.selfApprove && rules.approvals === 1;
}

/**
 * Rules no requester could ever satisfy (fewer people may approve than approvals are needed), as messages
 * naming the setting and the fix; the configuration is refused with them rather than every gate expiring.
 */
export function unsatisfiableApprovals(policy: RulesSource): string[] {
  const problems: string[] = [];
  const check = (where: string, rules: ApprovalRules) => {
    // The requester counts as one possible approver only when self-approval is on.
    const possible = new Set(rules.approvers).size + (rules.selfApprove ? 1 : 0);
    if (possible >= rules.approvals) return;
    problems.push(
      `${where}: "approvals": ${rules.approvals} with "selfApprove": ${rules.selfApprove} needs at least ${rules.approvals - (rules.selfApprove ? 1 : 0)} approver(s), but ${rules.approvers.length ? `only ${rules.approvers.join(', ')} ${rules.approvers.length === 1 ? 'is' : 'are'} configured` : 'none is configured'}: add people to "approvers" (or APPROVERS), or lower "approvals", or allow "selfApprove"`,
    );
  };
  check('defaults', approvalRulesFor({ ...policy, tools: {} }, ''));
  for (const name of Object.keys(policy.tools)) check(`tools.${name}`, approvalRulesFor(policy, name));
  return problems;
}

/** The approval policy as a pure function: configuration, defaults and grants in, one decision out. */
import { globMatches } from './glob';
import type { Grant } from './grants';
import type { Policy, ToolDefinition } from './tools/definitions';

export interface ToolPolicyConfig {
  policy?: Policy | undefined;
  allow: string[];
  deny: string[];
}

export interface PolicyDecision {
  decision: Policy;
  /** Why, in words for the transcript and the operator. */
  reason: string;
  grantId?: string;
}

export function decidePolicy(input: {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  config: ToolPolicyConfig | undefined;
  grants: readonly Grant[];
  userId: string;
  sessionId: string;
}): PolicyDecision {
  const { tool, args, config, grants, userId, sessionId } = input;
  const subject = tool.subject(args);
  const denyPattern = config?.deny.find((pattern) => globMatches(pattern, subject));
  if (denyPattern) return { decision: 'deny', reason: `blocked by the deny pattern "${denyPattern}"` };

  const base = config?.policy ?? tool.defaultPolicy(args);
  if (base === 'deny') return { decision: 'deny', reason: `${tool.name} is disabled by policy` };
  if (base === 'auto') return { decision: 'auto', reason: 'allowed by policy' };

  const allowPattern = config?.allow.find((pattern) => globMatches(pattern, subject));
  if (allowPattern) return { decision: 'auto', reason: `allowed by the pattern "${allowPattern}"` };

  const grant = grants.find(
    (candidate) =>
      candidate.userId === userId &&
      candidate.toolName === tool.name &&
      (candidate.scope === 'user' || candidate.sessionId === sessionId) &&
      (!candidate.pattern || globMatches(candidate.pattern, subject)),
  );
  if (grant) return { decision: 'auto', reason: 'allowed by a standing grant', grantId: grant.id };
  return { decision: 'ask', reason: 'needs approval' };
}

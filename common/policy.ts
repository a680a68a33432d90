/**
 * The approval policy as a pure function: configuration, defaults, grants and (for shell_execute) the parsed
 * command in, one decision out. Order: deny patterns, argument rules (`when`), the tool's policy, allow
 * patterns, standing grants. A shell command is matched per simple command; only one plain program run can be
 * allowed by a pattern or a grant.
 */
import { globMatches } from './glob';
import type { Grant } from './grants';
import { commandViews, everyView, type ParsedShellCommand } from './shell-command';
import type { Policy, ToolDefinition } from './tools/definitions';

export interface WhenRule {
  /** Argument name to one pattern or a list; every named argument must match one of its patterns. */
  match: Record<string, string | string[]>;
  policy: Policy;
}

export interface ToolPolicyConfig {
  policy?: Policy | undefined;
  allow: string[];
  deny: string[];
  when?: WhenRule[] | undefined;
  selfApprove?: boolean | undefined;
  approvals?: number | undefined;
}

/** The policy file's top-level defaults for tools that do not set their own. */
export interface ApprovalDefaults {
  selfApprove: boolean;
  approvals: number;
}

export interface PolicyDecision {
  decision: Policy;
  /** Why, in words for the transcript and the operator. */
  reason: string;
  grantId?: string;
}

const SHELL_TOOL = 'shell_execute';
const SHELL_ARGUMENT = 'command';

/**
 * What patterns see of a call. Deny patterns and deny/ask rules see everything (`deny`); allow patterns, auto
 * rules and grants see `allow`, which is missing when the call is not provably one plain program run
 * (`unprovable` says why). A plain command is offered both as its words and as typed, so a grant made from
 * the prompt's text (`grep "a b" notes`) matches the same command again.
 */
interface Subjects {
  deny: string[];
  allow: string[] | undefined;
  unprovable: string | undefined;
}

function subjectsOf(tool: ToolDefinition, subject: string, shell: ParsedShellCommand | undefined): Subjects {
  if (tool.name !== SHELL_TOOL) return { deny: [subject], allow: [subject], unprovable: undefined };
  if (!shell) return { deny: [subject], allow: undefined, unprovable: 'the command was not parsed' };
  const deny = new Set([subject]);
  let complete = true;
  for (const words of shell.commands) {
    const views = commandViews(words);
    for (const view of views.views) deny.add(view);
    complete &&= views.complete;
  }
  const hazards = [...shell.hazards];
  if (!complete) hazards.push('more nested command wrappers (sudo, env, xargs, ...) than the policy follows');
  const unprovable = shell.parseError
    ? `the command could not be parsed (${shell.parseError})`
    : hazards.length
      ? `the command has ${hazards.join(', ')}`
      : shell.commands.length !== 1
        ? 'the command runs no single program'
        : undefined;
  return {
    deny: [...deny],
    allow: unprovable ? undefined : [...new Set([shell.commands[0]!.join(' '), subject])],
    unprovable,
  };
}

/**
 * Why a deny pattern might match what this shell command runs although none matched its known views: a pattern
 * matching from some later word (an unknown wrapper, `mywrap rm -rf x`), or a command the parser cannot read or
 * prove plain (`/???/r? -rf x`, `$(printf rm) -rf x`), which could be anything. Undefined: none can.
 */
function mayBeDenied(
  deny: readonly string[],
  subjects: Subjects,
  shell: ParsedShellCommand | undefined,
): string | undefined {
  if (!deny.length) return undefined;
  for (const words of shell?.commands ?? [])
    for (const view of [...everyView(words), ...everyView(innerWords(words))]) {
      const pattern = deny.find((p) => globMatches(p, view));
      if (pattern) return `the deny pattern "${pattern}" matches "${view}" inside it`;
    }
  if (subjects.unprovable) return `deny patterns are set and ${subjects.unprovable}`;
  return undefined;
}

/**
 * The words inside a command's words, as a program handed a string might split them: on blanks, `;`, `&`, `|`,
 * `=`, quotes and substitution marks, and an option's glued value (`-Srm …`). `flock f -c 'true; rm -rf x'` holds
 * `rm -rf x`.
 */
function innerWords(words: readonly string[]): string[] {
  return words
    .flatMap((word) => word.split(/[\s;&|=`$()'"{}<>]+/))
    .map((word) => word.replace(/^-[a-zA-Z]*S(?=.)/, ''))
    .filter(Boolean);
}

/** String arguments as they are, anything else as JSON; a missing argument matches nothing. */
function argumentText(value: unknown): string | undefined {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function ruleMatches(
  rule: WhenRule,
  args: Record<string, unknown>,
  shellCommand: Subjects | undefined,
): boolean {
  return Object.entries(rule.match).every(([name, patterns]) => {
    const list = typeof patterns === 'string' ? [patterns] : patterns;
    // A shell command seen as its simple commands: auto rules only see a provably plain one.
    const texts =
      shellCommand && name === SHELL_ARGUMENT
        ? rule.policy === 'auto'
          ? (shellCommand.allow ?? [argumentText(args[name])])
          : shellCommand.deny
        : [argumentText(args[name])];
    return texts.some((text) => text !== undefined && list.some((pattern) => globMatches(pattern, text)));
  });
}

export function decidePolicy(input: {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  config: ToolPolicyConfig | undefined;
  grants: readonly Grant[];
  userId: string;
  sessionId: string;
  /** shell_execute's command, parsed on the Node side; without it nothing can allow a shell command by pattern. */
  shell?: ParsedShellCommand | undefined;
  defaults?: ApprovalDefaults | undefined;
}): PolicyDecision {
  const { tool, args, config, grants, userId, sessionId } = input;
  const subjects = subjectsOf(tool, tool.subject(args), input.shell);
  const needsApproval = (why?: string): PolicyDecision => {
    const because = subjects.unprovable ?? why;
    return { decision: 'ask', reason: because ? `needs approval: ${because}` : 'needs approval' };
  };

  for (const pattern of config?.deny ?? [])
    if (subjects.deny.some((text) => globMatches(pattern, text)))
      return { decision: 'deny', reason: `blocked by the deny pattern "${pattern}"` };
  // A command a deny pattern might still match (through a wrapper the policy does not know, or in a part it
  // cannot read) is never allowed without a person, whatever the policy, rules, allow patterns or grants say.
  const mayDeny =
    tool.name === SHELL_TOOL ? mayBeDenied(config?.deny ?? [], subjects, input.shell) : undefined;
  const decided = (decision: PolicyDecision): PolicyDecision =>
    decision.decision === 'auto' && mayDeny
      ? { decision: 'ask', reason: `needs approval: ${mayDeny} (${decision.reason} otherwise)` }
      : decision;

  const shellCommand = tool.name === SHELL_TOOL ? subjects : undefined;
  const ruleIndex = (config?.when ?? []).findIndex((rule) => ruleMatches(rule, args, shellCommand));
  const rule = config?.when?.[ruleIndex];
  if (rule) {
    const which = `argument rule ${ruleIndex + 1} of ${tool.name}`;
    if (rule.policy === 'deny') return { decision: 'deny', reason: `blocked by ${which}` };
    if (rule.policy === 'ask') return { decision: 'ask', reason: `needs approval: ${which} asks for it` };
    if (subjects.allow === undefined) return needsApproval(which);
    return decided({ decision: 'auto', reason: `allowed by ${which}` });
  }

  const base = config?.policy ?? tool.defaultPolicy(args);
  if (base === 'deny') return { decision: 'deny', reason: `${tool.name} is disabled by policy` };
  if (base === 'auto') return decided({ decision: 'auto', reason: 'allowed by policy' });

  const allows = (pattern: string) => !!subjects.allow?.some((text) => globMatches(pattern, text));
  const allowPattern = config?.allow.find(allows);
  if (allowPattern) return decided({ decision: 'auto', reason: `allowed by the pattern "${allowPattern}"` });

  const theirs = grants.filter(
    (candidate) =>
      candidate.userId === userId &&
      candidate.toolName === tool.name &&
      (candidate.scope === 'user' || candidate.sessionId === sessionId),
  );
  // A grant is what its person saw: the call shown (an exact pattern) or the pattern they typed. One without a
  // pattern (made before grants were exact, from a button that did not say so) no longer applies.
  const grant = theirs.find((candidate) => !!candidate.pattern && allows(candidate.pattern));
  if (!grant)
    return theirs.some((candidate) => !candidate.pattern)
      ? needsApproval(
          `your earlier "Always allow" of every ${tool.name} call no longer applies (a grant now covers the call it was given for; choose Always allow again)`,
        )
      : needsApproval();
  const selfApprove = config?.selfApprove ?? input.defaults?.selfApprove ?? true;
  const approvals = config?.approvals ?? input.defaults?.approvals ?? 1;
  // A grant is one person's standing approval: it cannot stand in for a second person or a quorum.
  if (!selfApprove || approvals > 1)
    return {
      decision: 'ask',
      reason: `needs approval: standing grants do not apply to ${tool.name} (${
        selfApprove ? `${approvals} approvals required` : 'someone other than the requester must approve'
      })`,
    };
  return decided({ decision: 'auto', reason: 'allowed by a standing grant', grantId: grant.id });
}

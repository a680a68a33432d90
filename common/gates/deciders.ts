/**
 * Who may decide an open gate, and what an approval gate asks (four-eyes, quorum): pure rules the workflow enforces and
 * every channel shows (the web client hides "Always allow" by `isProtected` as Slack and Discord do). Type imports
 * only, so the browser bundle takes it as it is.
 */
import type { Approval, ApprovalGate, Gate } from '../../workflows/session/contract';

/** The person an id is on this gate (the policy's `users` name when the gate knows it), else the id itself. */
export function personOn(gate: Pick<Gate, 'people'>, id: string): string {
  return (Object.hasOwn(gate.people ?? {}, id) ? gate.people![id] : undefined) ?? id;
}

/** Whether two ids are one person on this gate: the same id, or two ids of one listed person. */
export function samePerson(gate: Pick<Gate, 'people'>, a: string, b: string): boolean {
  return a === b || personOn(gate, a) === personOn(gate, b);
}

/** The ids with one id per person, the first of each kept (a person's name comes first among their ids). */
export function onePerPerson(gate: Pick<Gate, 'people'>, ids: readonly string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => {
    const person = personOn(gate, id);
    if (seen.has(person)) return false;
    seen.add(person);
    return true;
  });
}

/** Who may deny (and, for questions, answer): the requester (by any of their ids) and the configured approvers. */
export function mayDecide(gate: Gate, userId: string): boolean {
  return samePerson(gate, gate.requesterId, userId) || gate.approvers.includes(userId);
}

/** A gate this person can answer: a sign-in only its requester; anything else whoever may decide it. */
export function mayActOn(gate: Gate, userId: string): boolean {
  return gate.kind === 'credential' ? gate.requesterId === userId : mayDecide(gate, userId);
}

/**
 * Whether this gate lets a person read its conversation: while it waits, whoever may decide it; once decided, only
 * its requester and the approvers its rules named. A hand-over or an escalation lends the right to decide, and the
 * read access that comes with it, only while the gate waits.
 */
export function gateLetsRead(gate: Gate, userId: string): boolean {
  if (gate.status === 'pending') return mayDecide(gate, userId);
  const lent = new Set([
    ...(gate.kind === 'approval' ? (gate.delegations ?? []).map((d) => d.to) : []),
    ...(gate.kind === 'approval' && gate.escalation?.done ? gate.escalation.to : []),
  ]);
  return gate.requesterId === userId || (gate.approvers.includes(userId) && !lent.has(userId));
}

/** An approval gate's rules with the defaults of gates opened before four-eyes and quorum existed. */
export function approvalRules(gate: ApprovalGate): {
  needed: number;
  selfApprove: boolean;
  approvals: Approval[];
} {
  return {
    needed: gate.approvalsNeeded ?? 1,
    selfApprove: gate.selfApprove ?? true,
    approvals: gate.approvals ?? [],
  };
}

/**
 * The people who may approve a call: its approvers, and the requester unless self-approval is off; never someone
 * who handed their approval over (it moved to the person they named, so a hand-over adds no vote).
 */
export function approverIds(gate: ApprovalGate): string[] {
  const { selfApprove } = approvalRules(gate);
  const handedOver = (gate.delegations ?? []).map((d) => d.by);
  const others = gate.approvers.filter((id) => !samePerson(gate, id, gate.requesterId));
  return onePerPerson(
    gate,
    (selfApprove ? [gate.requesterId, ...others] : others).filter(
      (id) => !handedOver.some((by) => samePerson(gate, by, id)),
    ),
  );
}

/** Whether this id may approve the call: it is one of the people `approverIds` names, by any of their ids. */
export function mayApprove(gate: ApprovalGate, userId: string): boolean {
  return approverIds(gate).some((id) => samePerson(gate, id, userId));
}

/**
 * Four-eyes or quorum: what a standing grant would skip. Such a call is never "always allowed" (the choice is
 * not offered, and a crafted one is refused), and under a quorum nobody edits the arguments the others approved.
 */
export function isProtected(gate: ApprovalGate): boolean {
  const { needed, selfApprove } = approvalRules(gate);
  return needed > 1 || !selfApprove;
}

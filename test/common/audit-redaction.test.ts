/**
 * What the audit export hides under a tool's `secretArgs`: a gate's arguments (their digest stays), a revoked
 * grant's pattern, and what a mission change carries of the mission tools' arguments (its goal, a reason).
 */
import { describe, expect, it } from 'vitest';
import { auditChangeOf, redactAudit, type AuditChange } from '../../common/audit';

const secretOf =
  (policy: Record<string, string[]>) =>
  (tool: string): readonly string[] =>
    policy[tool] ?? [];

const missionChange = (action: string, changes: Record<string, unknown>, reason?: string): AuditChange =>
  auditChangeOf(
    {
      type: 'mission',
      workflowId: 'mission:m1',
      conversation: 'mission',
      action,
      by: 'alice',
      reason,
      mission: { id: 'm1', name: 'standup', changes },
    },
    Date.UTC(2026, 10, 30),
  );

describe('audit redaction', () => {
  it("hides a mission's goal and reasons as the mission tools' secret arguments, and nothing else", () => {
    const created = missionChange('created', { goal: 'read the payroll', cadence: { kind: 'manual' } });
    const paused = missionChange('paused', {}, 'the audit is on Friday');
    const policy = secretOf({ mission_create: ['goal'], mission_pause: ['reason'] });
    expect(redactAudit(created, policy).mission!.changes).toEqual({
      goal: '(secret)',
      cadence: { kind: 'manual' },
    });
    expect(redactAudit(paused, policy).reason).toBe('(secret)');
    // All of them with "*"; none without a policy entry.
    expect(redactAudit(created, secretOf({ mission_update: ['*'] })).mission!.changes).toEqual({
      goal: '(secret)',
      cadence: '(secret)',
    });
    expect(redactAudit(created, secretOf({}))).toBe(created);
  });

  it("hides a revoked grant's pattern when its tool has secret arguments", () => {
    const revoked = auditChangeOf(
      {
        type: 'grant',
        workflowId: 'user:alice',
        conversation: 'user',
        action: 'revoked',
        by: 'alice',
        grant: { id: 'g1', tool: 'http_request', pattern: 'https://payroll.example/*', scope: 'user' },
      },
      0,
    );
    expect(redactAudit(revoked, secretOf({ http_request: ['url'] })).grant!.pattern).toBe('(secret)');
    expect(redactAudit(revoked, secretOf({})).grant!.pattern).toBe('https://payroll.example/*');
  });
});

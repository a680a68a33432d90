import { describe, expect, it } from 'vitest';
import { approvalRulesFor, grantsMayApply, unsatisfiableApprovals } from '../../common/approval-rules';
import { policyFileSchema } from '../../infra/config';
import { testConfig } from '../helpers/config';

const policy = (raw: Record<string, unknown>) => policyFileSchema.parse(raw);

describe('approval rules', () => {
  it("takes a tool's own approvers, selfApprove and approvals over the defaults", () => {
    const p = policy({
      approvers: ['bob'],
      approvals: 1,
      tools: { shell_execute: { approvers: ['carol', 'dave'], selfApprove: false, approvals: 2 } },
    });
    expect(approvalRulesFor(p, 'shell_execute')).toEqual({
      approvers: ['carol', 'dave'],
      selfApprove: false,
      approvals: 2,
    });
    expect(approvalRulesFor(p, 'http_request')).toEqual({
      approvers: ['bob'],
      selfApprove: true,
      approvals: 1,
    });
  });

  it('lets standing grants apply only without four-eyes or a quorum', () => {
    expect(grantsMayApply({ approvers: [], selfApprove: true, approvals: 1 })).toBe(true);
    expect(grantsMayApply({ approvers: ['bob'], selfApprove: false, approvals: 1 })).toBe(false);
    expect(grantsMayApply({ approvers: ['bob'], selfApprove: true, approvals: 2 })).toBe(false);
  });

  it('names rules nobody could satisfy', () => {
    expect(unsatisfiableApprovals(policy({ tools: { shell_execute: { selfApprove: false } } }))).toEqual([
      'tools.shell_execute: "approvals": 1 with "selfApprove": false needs at least 1 approver(s), but none is configured: add people to "approvers" (or APPROVERS), or lower "approvals", or allow "selfApprove"',
    ]);
    expect(unsatisfiableApprovals(policy({ approvers: ['bob'], approvals: 3 }))[0]).toMatch(/^defaults: /);
    expect(unsatisfiableApprovals(policy({ approvers: ['bob'], approvals: 2 }))).toEqual([]);
  });

  it('refuses such a configuration at load, and accepts it once APPROVERS supplies the people', () => {
    const fourEyes = { tools: { shell_execute: { selfApprove: false } } };
    expect(() => testConfig(fourEyes)).toThrow(/Nobody could ever approve some calls: tools\.shell_execute/);
    expect(testConfig(fourEyes, { APPROVERS: 'bob' }).policy.approvers).toEqual(['bob']);
  });
});

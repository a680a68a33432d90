/**
 * One long-lived workflow per user holding their grants and their daily model spending; continues as new
 * before history grows large.
 */
import * as wf from '@temporalio/workflow';
import { continueOnCurrentVersion, listenForUpgrade, timeToContinue } from '../upgrade';
import { grantSchema, type Grant } from '../../common/grants';
import { userWorkflowId } from '../../common/ids';
import { AgentOwner } from '../../common/search-attributes';
import { addUsage, continuedFrom, NO_SPEND, type DaySpend } from '../../common/budgets';
import { auditChangeOf } from '../../common/audit';
import { auditsInFlight, grantRevoked, recordInTrail } from '../audit-trail';
import { SealedWord } from '../sealed-word';
import {
  addGrantUpdate,
  credentialChangeSignal,
  grantsQuery,
  recordSpendUpdate,
  revokeUserGrantSignal,
  spendQuery,
  type CredentialChange,
  type SpendRecord,
  type UserDirectoryInput,
} from './contract';

const MAX_GRANTS = 500;
/** Days of spending kept (the daily limit needs today's; a few more help people see their week). */
const SPEND_DAYS_KEPT = 7;
const SPEND_KEYS_KEPT = 500;
const HISTORY_EVENTS_BEFORE_CONTINUE = 2_000;

export async function userDirectoryWorkflow(input: UserDirectoryInput): Promise<void> {
  listenForUpgrade();
  // The person is the one the workflow id names: a directory started by someone else for another name would file
  // that person's sign-ins and grants under the wrong name.
  if (wf.workflowInfo().workflowId !== userWorkflowId(input.userId))
    throw wf.ApplicationFailure.nonRetryable(
      `user directory ${wf.workflowInfo().workflowId} was started for "${input.userId}": refused`,
    );
  // Grants carried in (or given to a hand-started run) are the person's own and well-formed, or dropped.
  const grants: Grant[] = (input.grants ?? []).filter(
    (grant) => grantSchema.safeParse(grant).success && grant.userId === input.userId,
  );
  wf.upsertSearchAttributes([{ key: AgentOwner, value: input.userId }]);

  wf.setHandler(grantsQuery, () => grants);
  wf.setHandler(
    addGrantUpdate,
    (grant) => {
      const same = grants.findIndex((g) => g.id === grant.id);
      if (same >= 0) return grants[same]!;
      grants.push(grant);
      return grant;
    },
    {
      validator: (grant) => {
        grantSchema.parse(grant);
        if (grant.userId !== input.userId) throw new Error('a grant belongs to the user it names');
        if (grants.length >= MAX_GRANTS)
          throw new Error(`at most ${MAX_GRANTS} grants per user: revoke some first`);
      },
    },
  );
  const sealedWord = new SealedWord(input.usedSeals);
  const fromGateway = (signal: string, payload: unknown, seal: unknown) =>
    sealedWord.believe(signal, payload, seal);
  wf.setHandler(revokeUserGrantSignal, async (raw, seal) => {
    // Applied whatever the seal says (taking a grant away is never a risk, and a revocation must not be lost); the
    // seal says whether the audit may name the person as the one who revoked it.
    const index = grants.findIndex((g) => g.id === raw?.grantId);
    if (index < 0) return;
    const [revoked] = grants.splice(index, 1);
    const sealed = await fromGateway('revokeUserGrant', raw, seal);
    recordInTrail(grantRevoked(revoked!, 'user', sealed));
  });
  wf.setHandler(credentialChangeSignal, async (change, seal) => {
    if (!validCredentialChange(change)) return;
    if (!(await fromGateway('credentialChange', change, seal)))
      return wf.log.warn('credential change not from a gateway: not recorded', { provider: change.provider });
    recordInTrail(
      auditChangeOf(
        {
          type: 'credential',
          workflowId: wf.workflowInfo().workflowId,
          conversation: 'user',
          action: change.action,
          by: input.userId,
          provider: change.provider,
          ...(change.how ? { how: change.how } : {}),
        },
        Date.now(),
      ),
    );
  });

  const spend: Record<string, DaySpend> = { ...input.spend };
  const spendKeys: string[] = [...(input.spendKeys ?? [])];
  wf.setHandler(spendQuery, () => spend);
  wf.setHandler(
    recordSpendUpdate,
    (record) => {
      const day: DaySpend = spend[record.day] ?? { ...NO_SPEND, raises: 0 };
      if (spendKeys.includes(record.key)) return day;
      spendKeys.push(record.key);
      if (spendKeys.length > SPEND_KEYS_KEPT) spendKeys.splice(0, spendKeys.length - SPEND_KEYS_KEPT);
      const spent = addUsage(day, record.usage);
      const next: DaySpend = record.raise
        ? { ...spent, raises: day.raises + 1, continuedAt: continuedFrom(spent) }
        : { ...day, ...spent };
      spend[record.day] = next;
      for (const old of Object.keys(spend).sort().slice(0, -SPEND_DAYS_KEPT)) delete spend[old];
      return next;
    },
    { validator: validateSpendRecord },
  );

  await wf.condition(() => timeToContinue(HISTORY_EVENTS_BEFORE_CONTINUE));
  // One condition: a handler that starts while records are written is waited for too.
  await wf.condition(() => wf.allHandlersFinished() && auditsInFlight() === 0);
  await continueOnCurrentVersion<typeof userDirectoryWorkflow>({
    userId: input.userId,
    ...(sealedWord.carry() ? { usedSeals: sealedWord.carry() } : {}),
    grants,
    spend,
    spendKeys,
  });
}

function validateSpendRecord(record: SpendRecord): void {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(record.day)) throw new Error('day must be YYYY-MM-DD (UTC)');
  if (typeof record.key !== 'string' || !record.key || record.key.length > 200)
    throw new Error('key must be 1-200 characters');
  const { usage } = record;
  const count = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (usage && !(count(usage.inputTokens) && count(usage.outputTokens) && count(usage.costUsd ?? 0)))
    throw new Error('usage must be non-negative numbers');
}

/** A credential change as the gateway sends it; anything else is dropped (a signal cannot be refused). */
function validCredentialChange(change: CredentialChange): boolean {
  return (
    typeof change?.provider === 'string' &&
    /^[A-Za-z0-9_.-]{1,64}$/.test(change.provider) &&
    (change.action === 'connected' || change.action === 'disconnected') &&
    (change.how === undefined || change.how === 'oauth' || change.how === 'api_key')
  );
}

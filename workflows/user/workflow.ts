/** One long-lived workflow per user holding their grants; continues as new before history grows large. */
import * as wf from '@temporalio/workflow';
import { grantSchema, type Grant } from '../../common/grants';
import { AgentOwner } from '../../common/search-attributes';
import { addGrantUpdate, grantsQuery, revokeUserGrantSignal, type UserDirectoryInput } from './contract';

const MAX_GRANTS = 500;
const HISTORY_EVENTS_BEFORE_CONTINUE = 2_000;

export async function userDirectoryWorkflow(input: UserDirectoryInput): Promise<void> {
  const grants: Grant[] = [...(input.grants ?? [])];
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
  wf.setHandler(revokeUserGrantSignal, ({ grantId }) => {
    const index = grants.findIndex((g) => g.id === grantId);
    if (index >= 0) grants.splice(index, 1);
  });

  await wf.condition(
    () =>
      wf.workflowInfo().continueAsNewSuggested ||
      wf.workflowInfo().historyLength > HISTORY_EVENTS_BEFORE_CONTINUE,
  );
  await wf.condition(wf.allHandlersFinished);
  await wf.continueAsNew<typeof userDirectoryWorkflow>({ userId: input.userId, grants });
}

/**
 * `npm run record-histories`: runs every scenario against a fresh dev server and saves the histories of the paths a
 * new run takes here. test/workflows/replay.test.ts replays them on every CI run: a failing replay means the change
 * alters the command sequence of running workflows, so it ships as a new Worker Deployment version (record again,
 * all of them) or, when running workflows must take it at once, behind `patched()` (docs/VERSIONING.md). Scenarios
 * that create missions run in a group of their own: an owner's mission directory is polled only by the worker of the
 * group that started it.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { activityHeartbeats } from '../../activities/heartbeat';
import { McpPool } from '../../activities/mcp/pool';
import { userWorkflowId } from '../../common/ids';
import {
  answerDraftSignal,
  decideSignal,
  credentialProvidedSignal,
  stopSignal,
  stateQuery,
  feedbackSignal,
  type AnswerDraft,
} from '../../workflows/session/contract';
import type { AppConfig } from '../../infra/config';
import { CredentialService } from '../../infra/credentials/service';
import { MISSION_DIRECTORY_ID, missionDirectoryId, missionWorkflowId } from '../../common/missions/types';
import { workflowCode } from '../../workers/workflow-code';
import { tempDir, testConfig } from '../helpers/config';
import { budgetGateHandingOver, budgetGates } from '../helpers/budget-handover';
import { approveReusedIdCalls, reusedCallIdModel } from '../helpers/reused-call-ids';
import { FakeSlack } from '../helpers/fake-slack';
import { TestSession } from '../helpers/session';
import { firedMissionGate, missionAnswered, missionRecordsOf } from '../helpers/missions';
import { startTestTemporal } from '../helpers/temporal';
import { startFork } from '../../gateways/forks';

/** A scenario may name more workflows to record (label -> workflow id), e.g. a mission and its run. */
type Scenario = (
  session: TestSession,
  sessions: () => TestSession,
  config: AppConfig,
) => Promise<void | Record<string, string>>;

/** A run terminated while it waits on an approval, then a new message: the next run continues from it. */
const terminatedThenRecovered: Scenario = async (s) => {
  await s.say('run `echo never`');
  await s.pendingGate();
  await s.handle.terminate('recording');
  await s.say('hello again');
  await s.idle();
};

/** A question asked, answered, then a plain message. */
const questionAnswered: Scenario = async (s) => {
  await s.say('ask one');
  const gate = await s.pendingQuestion();
  await s.answer(gate.id, [{ question: 'Environment', selected: ['staging'] }]);
  await s.idle();
  await s.say('hello');
  await s.idle();
};

/** Two approvals open at once: more clicks than the history allows, so the wait continues as new mid-wait. */
const continueAsNewMidWait: Scenario = async (s) => {
  await s.say('run `echo a` and `echo b`');
  const gates = await s.pendingGate(2);
  const first = (await s.handle.describe()).runId;
  for (let i = 0; i < 4; i++)
    await s.decide({ gateId: gates[0]!.id, choice: 'approve', userId: `mallory${i}` });
  while ((await s.handle.describe()).runId === first) await new Promise((r) => setTimeout(r, 100));
  await s.waitFor((v) => v.status === 'waiting_approval', 'the resumed wait');
  for (const gate of gates) await s.decide({ gateId: gate.id, choice: 'approve' });
  await s.idle();
  await s.say('and a second turn');
  await s.idle();
};

/**
 * One of two approvals decided, then more clicks than the history allows: the wait continues as new with the
 * decision already told, and the next run does not tell it again (CarriedTurn.told).
 */
const toldOnceAcrossContinueAsNew = async (s: TestSession): Promise<void> => {
  await s.say('run `echo a` and `echo b`');
  const [decided, open] = await s.pendingGate(2);
  const first = (await s.handle.describe()).runId;
  await s.decide({ gateId: decided!.id, choice: 'approve' });
  await s.waitFor(
    (v) => v.gates.find((g) => g.id === decided!.id)?.status !== 'pending',
    'the first gate decided',
  );
  for (let i = 0; i < 4; i++) await s.decide({ gateId: open!.id, choice: 'approve', userId: `mallory${i}` });
  while ((await s.handle.describe()).runId === first) await new Promise((r) => setTimeout(r, 100));
  await s.waitFor((v) => v.status === 'waiting_approval', 'the resumed wait');
  await s.decide({ gateId: open!.id, choice: 'approve' });
  await s.idle();
};

/**
 * Recorded in a Slack thread (a local Slack Web API), where telling a decision is a command (a delivery that edits
 * the prompt): a second tell would change what a replay must find. Continues as new after 20 events.
 */
const slackScenarios: Record<string, Scenario> = {
  'slack-told-once-across-continue-as-new': async (s) => await toldOnceAcrossContinueAsNew(s.inSlackThread()),
};

/** The local Slack Web API the Slack groups record against (a scenario may hold its answers). */
let recordingSlack: FakeSlack | undefined;

/**
 * In a Slack thread with a 1-token conversation limit, continuing as new after 20 events: the budget gate is
 * decided while its run waits to hand over. Today's next run takes the decision up; before CarriedTurn.budgetGateId
 * it asked again (a second gate, approved here so the turn ends).
 */
const slackBudgetScenarios: Record<string, Scenario> = {
  'slack-budget-decided-while-handing-over': async (s) => await budgetDecidedWhileHandingOver(s),
  // The limit raised while the run hands over: the next run needs no approval and tells the decision.
  'slack-budget-approved-limit-raised': async (s, _sessions, config) => {
    const before = config.policy.budgets.perConversation;
    try {
      await budgetDecidedWhileHandingOver(s, {
        beforeRelease: () => (config.policy.budgets.perConversation = { tokens: 1_000_000 }),
      });
    } finally {
      config.policy.budgets.perConversation = before;
    }
  },
};

/** The same with budget gates lasting 4 s, approved once the deadline passed: the gate expires (LATE_DECISION_EXPIRES). */
const slackLateScenarios: Record<string, Scenario> = {
  'slack-budget-approved-too-late': async (s) => await budgetDecidedWhileHandingOver(s, { late: true }),
};

async function budgetDecidedWhileHandingOver(
  session: TestSession,
  options: { late?: boolean; beforeRelease?: () => void } = {},
): Promise<void> {
  const s = session.inSlackThread();
  const { gate, release } = await budgetGateHandingOver(s, recordingSlack!);
  if (options.late) await new Promise((resolve) => setTimeout(resolve, gate.expiresAt! - Date.now() + 200));
  await s.decide({ gateId: gate.id, choice: 'approve' });
  await s.waitFor((v) => budgetGates(v)[0]?.status !== 'pending', 'the decision recorded');
  options.beforeRelease?.();
  await release();
  // Before the fix each new run could ask again (and hand over again while asking): approve until answered.
  for (let asked = 0; asked < 5; asked++) {
    const view = await s.waitFor(
      (v) =>
        (v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant') ||
        budgetGates(v).some((g) => g.status === 'pending'),
      'the answer or another budget gate',
    );
    const again = budgetGates(view).find((g) => g.status === 'pending');
    if (!again) return;
    // Decided while a run sits at the gate, not as one hands over (which would ask once more).
    await runSettled(s);
    await s.decide({ gateId: again.id, choice: 'approve' });
    await s.waitFor(
      (v) => budgetGates(v).find((g) => g.id === again.id)?.status !== 'pending',
      'the decision',
    );
  }
  throw new Error('asked about the budget five times');
}

/** Waits until the session's run has not changed for a second (a recording aid, never used in tests). */
async function runSettled(s: TestSession): Promise<void> {
  let last = '';
  let since = Date.now();
  while (Date.now() - since < 1000) {
    const runId = (await s.handle.describe()).runId;
    if (runId !== last) [last, since] = [runId, Date.now()];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Recorded on a worker that continues as new after 20 events; both runs are kept. */
const longScenarios: Record<string, Scenario> = {
  'told-once-across-continue-as-new': (s) => toldOnceAcrossContinueAsNew(s),
  'continue-as-new-mid-wait': continueAsNewMidWait,
};

const scenarios: Record<string, Scenario> = {
  // A call with side effects runs once (one attempt, our own call id); a read-only one may retry.
  'tool-runs-once': async (s) => {
    await s.say('run `echo once`');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    await s.idle();
    await s.say('what time is it');
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === 2,
      'the time',
    );
  },
  // A retry of an answer by who asked (only they may): the fork starts with its turn carried, answers from the recorded result.
  'fork-retry': async (s) => {
    await s.say('run `echo forked`');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    const done = await s.idle();
    const answer = done.transcript.findLast((m) => m.role === 'assistant')!;
    const fork = await startFork(
      s.client,
      s.taskQueue,
      { from: s.workflowId, messageId: answer.id, mode: 'retry', by: 'alice' },
      10_000,
    );
    const forked = s.client.workflow.getHandle(fork.workflowId);
    for (let i = 0; i < 100; i++) {
      const v = await forked.query(stateQuery);
      if (
        v.status === 'idle' &&
        v.transcript.at(-1)?.role === 'assistant' &&
        v.transcript.at(-1)!.id !== answer.id
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { fork: fork.workflowId };
  },
  'approve-then-answer': async (s) => {
    await s.say('run `echo recorded`');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    await s.idle();
  },
  // A decision with a forged gateway seal is refused and told; the gateway's own then decides.
  'unsealed-refused': async (s) => {
    await s.say('run `echo sealed`');
    const [gate] = await s.pendingGate();
    const forged = { issuedAt: Date.now(), mac: 'forged-seal' };
    await s.handle.signal(decideSignal, { gateId: gate!.id, choice: 'approve', userId: 'alice' }, forged);
    await s.waitFor((v) => v.notices.some((n) => /refused/.test(n.text)), 'the refusal told');
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    await s.idle();
  },
  'deny-edit-always-typed': async (s) => {
    await s.say('run `echo a` and `echo b`');
    const [a, b] = await s.pendingGate(2);
    await s.decide({ gateId: a!.id, choice: 'deny', reason: 'not now' });
    await s.decide({ gateId: b!.id, choice: 'edit', args: { command: 'echo edited' } });
    await s.idle();
    await s.say('run `echo c`');
    const [c] = await s.pendingGate();
    await s.decide({ gateId: c!.id, choice: 'approve', userId: 'mallory' });
    await s.decide({ gateId: c!.id, choice: 'always', scope: 'session' });
    await s.waitFor(
      (v) => v.status === 'idle' && v.grants.length === 1 && v.transcript.at(-1)?.role === 'assistant',
      'the grant',
    );
    // "Always" grants exactly the command shown: the same command runs again without asking.
    await s.say('run `echo c`');
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === 4,
      'the granted command to run again',
    );
    await s.say('post https://example.invalid x');
    await s.pendingGate();
    await s.say('deny no posting');
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === 5,
      'typed deny',
    );
  },
  'stopped-turns': async (s) => {
    // Stopped at a gate (the signal), then while a tool runs (typed), then an ordinary turn.
    await s.say('run `echo x`');
    await s.pendingGate();
    await s.handle.signal(stopSignal, { userId: 'alice' });
    await s.waitFor((v) => v.status === 'idle' && v.transcript.length === 4, 'the first stop');
    await s.say('run `sleep 3`');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    await s.waitFor((v) => v.gates.at(-1)?.status === 'resolved', 'the tool to start');
    await s.say('stop');
    await s.waitFor((v) => v.status === 'idle' && v.transcript.length === 8, 'the second stop');
    await s.say('hello');
    await s.waitFor((v) => v.status === 'idle' && v.transcript.length === 10, 'the answer');
  },
  'superseded-and-queued': async (s) => {
    await s.say('run `echo x`');
    await s.pendingGate();
    await s.say('what time is it');
    await s.say('hello');
    await s.waitFor(
      (v) =>
        v.status === 'idle' &&
        v.queued === 0 &&
        v.transcript.filter((m) => m.role === 'user').length === 3 &&
        v.transcript.at(-1)?.role === 'assistant',
      'all turns',
    );
  },
  'question-drafts': async (s) => {
    await s.say('ask me');
    const gate = await s.pendingQuestion();
    const draft = (value: Omit<AnswerDraft, 'gateId' | 'userId'>, userId = 'alice') =>
      s.handle.signal(answerDraftSignal, { gateId: gate.id, userId, ...value });
    await draft({ picks: [{ index: 0, selected: ['staging'] }] }, 'mallory');
    await draft({ picks: [{ index: 0, selected: ['moon'] }] });
    await draft({ picks: [{ index: 0, selected: ['staging'] }] });
    await draft({ texts: [{ index: 1, text: 'security scan' }] });
    await s.idle();
    await s.say('ask me');
    const second = (await s.pendingQuestion()).id;
    await s.handle.signal(answerDraftSignal, {
      gateId: second,
      userId: 'alice',
      texts: [{ index: 0, text: '2' }],
    });
    await s.handle.signal(answerDraftSignal, { gateId: second, userId: 'alice', submit: true });
    await s.idle();
  },
  'question-answered': async (s) => {
    await s.say('ask me');
    const gate = await s.pendingQuestion();
    await s.answer(gate.id, [{ question: 'Environment', selected: ['moon'] }]);
    await s.answer(gate.id, [
      { question: 'Environment', selected: ['staging'] },
      { question: 'Checks', selected: ['lint'], custom: 'smoke' },
    ]);
    await s.idle();
    await s.say('ask one');
    await s.pendingQuestion();
    await s.say('1');
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === 2,
      'typed answer',
    );
  },
  'terminated-then-recovered': terminatedThenRecovered,
  'always-everywhere': async (s, next) => {
    await s.say('run `git status`', 'carol');
    const [gate] = await s.pendingGate();
    await s.decide({
      gateId: gate!.id,
      choice: 'always',
      scope: 'user',
      pattern: 'git status*',
      userId: 'carol',
    });
    await s.idle();
    const other = next();
    await other.say('run `git status -s`', 'carol');
    await other.idle();
  },
};

/** A sign-in asked for, the credential written to the vault, then a second call that needs no sign-in. */
const credentialConnected: Scenario = async (s, _next, config) => {
  await s.say('fetch http://127.0.0.1:9/files with acme');
  await s.waitFor((v) => v.status === 'waiting_credential', 'the credential gate');
  const credentials = CredentialService.fromConfig(config);
  await credentials.vault.put('alice', 'acme', { accessToken: 'recording-token' }, null);
  await credentials.close();
  await s.handle.signal(credentialProvidedSignal, { provider: 'acme', userId: 'alice' });
  await s.idle();
  await s.say('fetch http://127.0.0.1:9/more with acme');
  await s.waitFor(
    (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === 2,
    'the second call',
  );
};

/** Recorded with a credential provider configured; the sign-in is simulated by writing the vault directly. */
const credentialScenarios: Record<string, Scenario> = {
  'mission-approved-run': async (s, _next, config) => {
    const gate = await firedMissionGate(s, 'nightly');
    await s.decide({ gateId: gate.id, choice: 'approve' });
    await missionAnswered(s, 'nightly');
    const [record] = await missionRecordsOf(s.handle.client, 'alice');
    void config;
    return {
      mission: missionWorkflowId(record!.id),
      run: gate.remote!.workflowId,
      directory: missionDirectoryId('alice'),
    };
  },
  // A new message from the owner leaves the run's gate open; the denial ends the run and fails the mission.
  'mission-denied-run': async (s) => {
    const gate = await firedMissionGate(s, 'risky');
    await s.say('what time is it');
    await s.idle();
    await s.decide({ gateId: gate.id, choice: 'deny', reason: 'not today' });
    await s.waitFor(
      (v) => v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('**risky** failed')),
      'the failure told',
    );
    const run = s.handle.client.getHandle(gate.remote!.workflowId);
    while ((await run.describe()).status.name === 'RUNNING') await new Promise((r) => setTimeout(r, 100));
    const records = await missionRecordsOf(s.handle.client, 'alice');
    const record = records.find((r) => r.name === 'risky');
    return { mission: missionWorkflowId(record!.id), run: gate.remote!.workflowId };
  },
  // Someone cancels a run that waits on its gate: the mission fails and the prompt here closes.
  'mission-cancelled-run': async (s) => {
    const gate = await firedMissionGate(s, 'stopper');
    await s.handle.client.getHandle(gate.remote!.workflowId).cancel();
    await s.waitFor(
      (v) => v.gates.some((g) => g.id === gate.id && g.status === 'cancelled'),
      'the prompt closed',
    );
    const records = await missionRecordsOf(s.handle.client, 'alice');
    const record = records.find((r) => r.name === 'stopper');
    return { mission: missionWorkflowId(record!.id), run: gate.remote!.workflowId };
  },
  'mission-refused-click': async (s) => {
    const gate = await firedMissionGate(s, 'weekly');
    await s.decide({ gateId: gate.id, choice: 'approve', userId: 'mallory' });
    await s.waitFor((v) => v.notices.some((n) => n.to === 'mallory'), "the run's refusal told here");
    await s.decide({ gateId: gate.id, choice: 'approve' });
    await missionAnswered(s, 'weekly');
    const records = await missionRecordsOf(s.handle.client, 'alice');
    const record = records.find((r) => r.name === 'weekly');
    return { mission: missionWorkflowId(record!.id), run: gate.remote!.workflowId };
  },
  'credential-connected': credentialConnected,
  // The old directory of everyone on today's code: it hands each owner their records and ends.
  'mission-directory-moved': async (s) => {
    await s.say('call mission_create {"name": "moved", "goal": "what time is it", "cadence": "manual"}');
    await s.idle();
    const [record] = await missionRecordsOf(s.handle.client, 'alice');
    const { taskQueue } = await s.handle.describe();
    const records = [record!, { ...record!, id: randomUUID(), name: 'of bob', ownerId: 'bob' }];
    await s.handle.client
      .start('missionDirectoryWorkflow', { workflowId: MISSION_DIRECTORY_ID, taskQueue, args: [{ records }] })
      .then((legacy) => legacy.result());
    return { directory: MISSION_DIRECTORY_ID, owner: missionDirectoryId('bob') };
  },
};

/**
 * The flat gate wait (FLAT_GATE_WAIT): two approvals decided one after the other, an approval that expires, a
 * mission run's gate reminded twice before it is approved, and a sign-in. Recorded with reminders after a second
 * and approvals expiring after four.
 */
const flatWaitScenarios: Record<string, Scenario> = {
  'flat-wait-gates': async (s) => {
    await s.say('run `echo a` and `echo b`');
    const [a, b] = await s.pendingGate(2);
    await s.decide({ gateId: a!.id, choice: 'approve' });
    await s.waitFor(
      (v) => v.gates.some((g) => g.id === a!.id && g.status === 'resolved'),
      'the first decision',
    );
    await s.decide({ gateId: b!.id, choice: 'deny', reason: 'one is enough' });
    await s.idle();
    await s.say('run `echo late`');
    await s.pendingGate();
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool' && m.status === 'expired'),
      'the approval to expire',
    );
  },
  'flat-wait-mission-reminded': async (s) => {
    const gate = await firedMissionGate(s, 'reminded');
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // two reminders
    await s.decide({ gateId: gate.id, choice: 'approve' });
    await missionAnswered(s, 'reminded');
    const records = await missionRecordsOf(s.handle.client, 'alice');
    const record = records.find((r) => r.name === 'reminded');
    return { mission: missionWorkflowId(record!.id), run: gate.remote!.workflowId };
  },
  'flat-wait-credential': credentialConnected,
};

/** Recorded with a stdio MCP server whose tool list is looked at again after a second, or on request. */
const mcpScenarios: Record<string, Scenario> = {
  'mcp-refresh-requested': async (s) => {
    await s.say('call mcp_refresh {}');
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool' && m.name === 'mcp_refresh'),
      'the refreshed list',
    );
  },
  'mcp-server-question': async (s) => {
    // The server asks during the call: refused once (not a whole number), answered, declined the second time.
    await s.say('call booking__book_table {"restaurant": "Recorded"}');
    const [approval] = await s.pendingGate();
    await s.decide({ gateId: approval!.id, choice: 'approve' });
    const question = await s.pendingQuestion();
    const answers = (guests: string) => [
      { question: 'Name', selected: [], custom: 'Ada' },
      { question: 'Guests', selected: [], custom: guests },
      { question: 'Time', selected: ['Six'] },
    ];
    await s.answer(question.id, answers('many'));
    await s.answer(question.id, answers('2'));
    await s.idle();
    await s.say('call booking__book_table {"restaurant": "Declined"}');
    const [second] = await s.pendingGate();
    await s.decide({ gateId: second!.id, choice: 'approve' });
    await s.decide({ gateId: (await s.pendingQuestion()).id, choice: 'deny' });
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === 2,
      'the declined call',
    );
  },
  'mcp-approved-refreshed': async (s) => {
    await s.say('call notes__write_note {"name": "todo", "text": "recorded"}');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    await s.idle();
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // the tool list is now stale
    await s.say('call notes__read_note {"name": "todo"}');
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'tool').length === 2,
      'the second call',
    );
  },
};

/** Recorded under four-eyes and a quorum of two for shell_execute (approvers bob and carol). */
const quorumScenarios: Record<string, Scenario> = {
  'quorum-approved': async (s) => {
    await s.say('run `echo quorum`');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' }); // the requester: refused
    await s.decide({ gateId: gate!.id, choice: 'approve', userId: 'bob' });
    await s.decide({ gateId: gate!.id, choice: 'approve', userId: 'bob' }); // twice: refused
    await s.decide({ gateId: gate!.id, choice: 'always', userId: 'bob' }); // refused under a quorum
    await s.decide({ gateId: gate!.id, choice: 'approve', userId: 'carol' });
    await s.idle();
    await s.say('run `echo second`');
    const [second] = await s.pendingGate();
    await s.decide({ gateId: second!.id, choice: 'approve', userId: 'carol' });
    await s.decide({ gateId: second!.id, choice: 'deny', reason: 'not twice', userId: 'alice' });
    await s.idle();
  },
};

/** Ratings of an answer (Slack's feedback buttons signal the same): recorded, and the search attribute set. */
/**
 * Recorded against a local Chat Completions API that reuses one tool call id: twice in a reply, then in the next
 * two replies (DISTINCT_CALL_IDS renames them; the third reply's shell call is asked about again).
 */
const reusedIdScenarios: Record<string, Scenario> = {
  'reused-call-ids': async (s) => {
    await approveReusedIdCalls(s);
    await s.waitFor((v) => v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant', 'the answer');
  },
};

const feedbackScenarios: Record<string, Scenario> = {
  // Parked on a question, answered, then a second message; bench/floor/replay.ts replays it up to the question.
  'question-then-message': questionAnswered,
  // Model calls name the earlier messages by reference; the worker's store lost them (another host, pruned): the
  // call is refused as missing chunks and sent again whole.
  'transcript-chunks-resent': async (s, _next, config) => {
    await s.say('what time is it');
    await s.idle();
    const store = new DatabaseSync(
      path.join(path.dirname(config.credentials.vaultPath), 'transcripts.sqlite'),
    );
    store.exec('DELETE FROM transcript_chunks');
    store.close();
    await s.say('and now?');
    await s.waitFor(
      (v) => v.status === 'idle' && v.transcript.filter((m) => m.role === 'user').length === 2,
      'the second answer',
    );
  },
  // A second turn within a minute reuses the settings the first one read: no activity.
  'settings-reused': async (s) => {
    for (const text of ['hello', 'and again', 'once more']) {
      await s.say(text);
      await s.idle();
    }
  },
  // A tool turn writes its status and waiting line only when they change.
  'visibility-unchanged': async (s) => {
    await s.say('run `true`');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    await s.idle();
    await s.say('hello');
    await s.idle();
  },
  'answer-feedback': async (s) => {
    await s.say('hello');
    const view = await s.idle();
    const answer = view.transcript.findLast((m) => m.role === 'assistant')!;
    await s.handle.signal(feedbackSignal, { messageId: answer.id, userId: 'alice', rating: 'bad' });
    await s.handle.signal(feedbackSignal, { messageId: answer.id, userId: 'alice', rating: 'good' });
    await s.waitFor(
      (v) => v.transcript.some((m) => m.role === 'assistant' && m.feedback?.[0]?.rating === 'good'),
      'the rating',
    );
  },
};

/** Budgets: a conversation limit reached, continued after a decision, then stopped; the day's ledger too. */
const budgetScenarios: Record<string, Scenario> = {
  'budget-gates': async (s) => {
    await s.say('hello');
    await s.idle();
    await s.say('once more');
    const [gate] = await s.pendingGate();
    await s.decide({ gateId: gate!.id, choice: 'approve' });
    await s.idle();
    await s.say('and again');
    const [second] = (await s.pendingGate()).filter((g) => g.id !== gate!.id);
    await s.decide({ gateId: second!.id, choice: 'deny' });
    await s.idle();
    return { ledger: userWorkflowId('alice') };
  },
};

/**
 * Scenarios recorded again under `baseline-<name>` once runs recorded the patches baseline (one marker for every
 * patch, workflows/versions.ts), so that path is replayed as well as the per-patch one.
 */
/** Records a group on a dev server of its own: per-user and per-namespace workflows start on the group's task queue. */
async function record(
  policy: Record<string, unknown>,
  group: Record<string, Scenario>,
  only: string[],
  extraEnv: Record<string, string> = {},
) {
  const scenarios = { ...group };
  if (only.length && !Object.keys(group).some((name) => only.includes(name))) return;
  const env = await startTestTemporal();
  const config = testConfig(policy, extraEnv);
  const taskQueue = `record-${Object.keys(scenarios)[0]}`;
  // Closed at the end: a stdio MCP server left running would keep this script from exiting.
  let credentials: CredentialService | undefined;
  const mcp = new McpPool(
    config.policy.mcpServers,
    () => (credentials ??= CredentialService.fromConfig(config)),
  );
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    ...workflowCode(),
    ...activityHeartbeats,
    activities: createActivities({
      config: { ...config, temporal: { ...config.temporal, taskQueue } },
      client: env.client,
      mcp,
    }),
  });
  await worker.runUntil(async () => {
    for (const [name, scenario] of Object.entries(scenarios)) {
      if (only.length && !only.includes(name)) continue;
      const session = new TestSession(env.client, taskQueue);
      const extra = await scenario(session, () => new TestSession(env.client, taskQueue), config);
      for (const [label, workflowId] of Object.entries(extra ?? {})) {
        const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(__dirname, `${name}-${label}.json`), historyToJSON(history));
        process.stdout.write(`recorded ${name}-${label}.json: ${history.events?.length} events\n`);
      }
      const runs: string[] = [];
      for await (const run of env.client.workflow.list({ query: `WorkflowId = '${session.workflowId}'` }))
        runs.push(run.runId);
      for (const [index, runId] of runs.reverse().entries()) {
        const history = await env.client.workflow.getHandle(session.workflowId, runId).fetchHistory();
        const file = runs.length === 1 ? `${name}.json` : `${name}-run${index + 1}.json`;
        // A run whose first workflow task has not run yet replays nothing (the replayer would wait for it): the
        // file recorded before stays.
        if (!history.events?.some((e) => e.workflowTaskCompletedEventAttributes)) {
          process.stdout.write(`skipped ${file}: its first workflow task had not run\n`);
          continue;
        }
        writeFileSync(path.join(__dirname, file), historyToJSON(history));
        process.stdout.write(`recorded ${file}: ${history.events?.length} events\n`);
      }
    }
    if (group['always-everywhere'] && (!only.length || only.includes('always-everywhere'))) {
      const directory = await env.client.workflow.getHandle(userWorkflowId('carol')).fetchHistory();
      if (directory.events?.length)
        writeFileSync(path.join(__dirname, 'user-directory.json'), historyToJSON(directory));
    }
  });
  await mcp.close();
  await credentials?.close();
  await env.teardown();
}

async function main(): Promise<void> {
  // `npm run record-histories -- <name>...` records only those scenarios; existing files stay as they are.
  const only = process.argv.slice(2);
  await record({ maxSteps: 4 }, scenarios, only);
  await record({ continueAsNewAfterEvents: 20 }, longScenarios, only);
  const slackGroups = [slackScenarios, slackBudgetScenarios, slackLateScenarios];
  if (!only.length || only.some((name) => slackGroups.some((group) => name in group))) {
    const slack = (recordingSlack = await new FakeSlack().start());
    const slackEnv = { SLACK_BOT_TOKEN: 'xoxb-recording', SLACK_API_URL: `${slack.url}/api/` };
    await record({ continueAsNewAfterEvents: 20 }, slackScenarios, only, slackEnv);
    await record(
      { continueAsNewAfterEvents: 20, budgets: { perConversation: { tokens: 1 } } },
      slackBudgetScenarios,
      only,
      slackEnv,
    );
    await record(
      { continueAsNewAfterEvents: 20, budgets: { perConversation: { tokens: 1 } }, questionTimeout: '4s' },
      slackLateScenarios,
      only,
      slackEnv,
    );
    await slack.stop();
  }
  await record({}, feedbackScenarios, only);
  if (!only.length || only.some((name) => name in reusedIdScenarios)) {
    const model = await reusedCallIdModel().start();
    await record({}, reusedIdScenarios, only, {
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'recording-key',
    });
    await model.stop();
  }
  await record(
    { budgets: { perConversation: { tokens: 1 }, perPersonPerDay: { tokens: 1_000_000 } } },
    budgetScenarios,
    only,
  );
  await record(
    { providers: { acme: { type: 'oauth2', issuer: 'https://id.acme.example', apiHosts: ['127.0.0.1:9'] } } },
    credentialScenarios,
    only,
    { OAUTH_ACME_CLIENT_ID: 'recording-client' },
  );
  await record(
    {
      mcpRefreshAfter: '1s',
      mcpServers: {
        notes: {
          command: 'node',
          args: [path.resolve(__dirname, '../fixtures/mcp-notes-server.mjs'), tempDir('mcp-notes-')],
          // The server's readOnlyHint makes read_note run at once (the path recorded with its refreshed list).
          trustAnnotations: true,
        },
        booking: {
          command: 'node',
          args: [path.resolve(__dirname, '../fixtures/mcp-asking-server.mjs'), tempDir('mcp-booking-')],
        },
      },
    },
    mcpScenarios,
    only,
  );
  await record(
    { tools: { shell_execute: { selfApprove: false, approvals: 2, approvers: ['bob', 'carol'] } } },
    quorumScenarios,
    only,
  );
  await record(
    {
      reminderAfter: '1s',
      tools: { shell_execute: { approvalTimeout: '4s' } },
      providers: { acme: { type: 'oauth2', issuer: 'https://id.acme.example', apiHosts: ['127.0.0.1:9'] } },
    },
    flatWaitScenarios,
    only,
    { OAUTH_ACME_CLIENT_ID: 'recording-client' },
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

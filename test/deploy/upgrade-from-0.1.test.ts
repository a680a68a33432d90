/**
 * Upgrading a 0.1 install the way people do it: conversations waiting on people under 0.1 (a web approval, a Slack
 * approval, an ask_user question, a credential sign-in, a mission run on a gate), 0.1's worker stopped, today's
 * worker started (the production start path, with Worker Versioning). Every old button, answer and sign-in then
 * takes effect once, transcripts and grants are intact, nothing fails with a nondeterminism error, and the
 * conversations end up on today's version.
 *
 * "0.1's worker" is an unversioned worker running the frozen 0.1 workflow bundle (workers/legacy/workflows-0.1.js.gz,
 * built from 0.1.0) with today's activities, which 0.1's call with the same arguments.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createActivities } from '../../activities';
import { activityHeartbeats } from '../../activities/heartbeat';
import { McpPool } from '../../activities/mcp/pool';
import { CredentialService } from '../../infra/credentials/service';
import { createLogger } from '../../infra/log';
import { buildIdOfBundle, currentBuildId } from '../../infra/temporal/deployment';
import { credentialProvidedSignal, type Gate } from '../../workflows/session/contract';
import { registerMissionUpdate, type MissionInput } from '../../workflows/missions/contract';
import { MISSION_DIRECTORY_ID, missionWorkflowId } from '../../common/missions/types';
import { AgentMissionName, AgentMissionStatus, AgentOwner } from '../../common/search-attributes';
import type { AppConfig } from '../../infra/config';
import { Drain } from '../../workers/drain';
import { LegacyRecovery } from '../../workers/legacy';
import { startWorker, type RunningWorker } from '../../workers/run-worker';
import { tempDir, testConfig } from '../helpers/config';
import { FakeSlack } from '../helpers/fake-slack';
import { lastAnswer, TestSession, toolResults } from '../helpers/session';
import { missionAnswered } from '../helpers/missions';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { nondeterminismIn, runsOf } from '../helpers/history';

const LEGACY = path.resolve(__dirname, '../../workers/legacy/workflows-0.1.js.gz');
const PROVIDERS = {
  acme: { type: 'oauth2', issuer: 'https://id.acme.example', apiHosts: ['127.0.0.1:9'] },
};

let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let today: RunningWorker | undefined;

beforeAll(async () => {
  env = await startTestTemporal();
  slack = await new FakeSlack().start();
});

afterAll(async () => {
  await today?.shutdown();
  await slack?.stop();
  await env?.teardown();
});

/** What 0.1's mission_create did: register in the directory of everyone, then start the mission. */
async function createdAs01(
  owner: TestSession,
  taskQueue: string,
  name: string,
  goal: string,
  config: AppConfig,
): Promise<void> {
  const id = randomUUID();
  await env.client.workflow.executeUpdateWithStart(registerMissionUpdate, {
    args: [{ id, name, ownerId: 'alice', shared: false, status: 'active' }],
    startWorkflowOperation: new WithStartWorkflowOperation('missionDirectoryWorkflow', {
      workflowId: MISSION_DIRECTORY_ID,
      taskQueue,
      args: [{}],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  const { maxRunsPerDay, cooldown, maxConsecutiveFailures } = config.policy.missions;
  const input: MissionInput = {
    id,
    name,
    ownerId: 'alice',
    settings: {
      goal,
      cadence: { kind: 'manual' },
      notifySessionId: owner.workflowId,
      notifyMode: 'always',
      shared: false,
    },
    guardrails: {
      maxRunsPerDay,
      cooldownMs: cooldown === 'never' ? Number.MAX_SAFE_INTEGER : cooldown,
      maxConsecutiveFailures,
    },
  };
  await env.client.workflow.start('missionWorkflow', {
    workflowId: missionWorkflowId(id),
    taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: AgentOwner, value: 'alice' },
      { key: AgentMissionName, value: name },
      { key: AgentMissionStatus, value: 'active' },
    ],
  });
}

describe('upgrading from 0.1', () => {
  it('carries every waiting 0.1 conversation onto today’s version: old buttons, answers and sign-ins take effect once', async () => {
    const taskQueue = `upgrade-${randomUUID()}`;
    const config = testConfig(
      { providers: PROVIDERS },
      {
        TEMPORAL_TASK_QUEUE: taskQueue,
        OAUTH_ACME_CLIENT_ID: 'upgrade-client',
        SLACK_BOT_TOKEN: 'xoxb-upgrade',
        SLACK_API_URL: `${slack.url}/api/`,
        WORKER_DRAIN_INTERVAL: '500ms',
      },
    );
    const legacyBundle = path.join(tempDir('legacy-'), 'workflows-0.1.js');
    writeFileSync(legacyBundle, gunzipSync(readFileSync(LEGACY)));
    const mcp = new McpPool({}, () => CredentialService.fromConfig(config));
    const v01 = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: legacyBundle },
      activities: createActivities({ config, client: env.client, mcp }),
      ...activityHeartbeats,
    });

    const web = new TestSession(env.client, taskQueue);
    const inSlack = new TestSession(env.client, taskQueue).inSlackThread();
    const asked = new TestSession(env.client, taskQueue);
    const signIn = new TestSession(env.client, taskQueue);
    const owner = new TestSession(env.client, taskQueue);
    const gates: Partial<Record<'web' | 'slack' | 'question' | 'mission', Gate>> = {};

    // Under 0.1: five people's waits.
    const before = await v01.runUntil(async () => {
      await web.say('run `echo web >> web.txt`');
      await web.waitFor((v) => v.status === 'waiting_approval', 'the web approval');
      [gates.web] = await web.pendingGate();
      await inSlack.say('run `echo slack`');
      [gates.slack] = await inSlack.pendingGate();
      await asked.say('run `echo granted`');
      const [standing] = await asked.pendingGate();
      await asked.decide({ gateId: standing!.id, choice: 'always', scope: 'session' });
      await asked.idle();
      await asked.say('ask one');
      gates.question = await asked.pendingQuestion();
      await signIn.say('fetch http://127.0.0.1:9/files with acme');
      await signIn.waitFor((v) => v.status === 'waiting_credential', 'the sign-in');
      // 0.1's mission_create registered the mission in the directory of everyone (`missions`), which today's
      // activities no longer do: it is done here as 0.1's did it.
      await owner.say('hello');
      await owner.idle();
      await createdAs01(owner, taskQueue, 'nightly', 'run `echo nightly`', config);
      await owner.say('call mission_fire "nightly"');
      const fired = await owner.waitFor(
        (v) => v.gates.some((g) => g.remote && g.status === 'pending'),
        'the run gate',
      );
      gates.mission = fired.gates.find((g) => g.remote && g.status === 'pending')!;
      return await Promise.all([web, inSlack, asked, signIn, owner].map((s) => s.state()));
    });
    await mcp.close();

    // The upgrade: today's worker, as `npm start` and `npm run worker` start it.
    const stackHandler = Error.prepareStackTrace;
    const rejectionHandlers = process.listenerCount('unhandledRejection');
    today = await startWorker(config, env.address, createLogger('worker', 'error'));
    // The current version is today's bundle (the one the worker built and kept), not the 0.1 one it runs beside it.
    const bundles = path.join(config.dataDir, 'workflow-bundles');
    const todays = readdirSync(bundles).filter((name) => /^workflows-[0-9a-f]+\.js$/.test(name));
    expect(todays).toHaveLength(1);
    const current = await currentBuildId(env.client, 'default', taskQueue);
    expect(current).toBe(buildIdOfBundle(path.join(bundles, todays[0]!)));

    // The sweep carries each conversation waiting on people onto today's version (its 0.1 run ended, today's started
    // with the same gates). The old buttons and answers are clicked once that is done, as people click them later:
    // a click in the moment between the two runs is refused and can be repeated (docs/VERSIONING.md), and one that
    // reaches the 0.1 run just before it ends leaves its tool call interrupted.
    const onToday = async (session: TestSession, what: string) =>
      await until(`${what} on today’s version`, async () =>
        (await session.handle.describe()).raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion
          ?.buildId === current
          ? true
          : undefined,
      );
    await onToday(web, 'the web conversation');
    await onToday(inSlack, 'the Slack conversation');
    await onToday(asked, 'the asked conversation');
    await onToday(signIn, 'the sign-in conversation');

    // The old buttons and answers, each once.
    await web.decide({ gateId: gates.web!.id, choice: 'approve' });
    await inSlack.decide({ gateId: gates.slack!.id, choice: 'approve' });
    await asked.answer(gates.question!.id, [{ question: 'Environment', selected: ['staging'] }]);
    const credentials = CredentialService.fromConfig(config);
    await credentials.vault.put('alice', 'acme', { accessToken: 'upgrade-token' }, null);
    await credentials.close();
    await signIn.handle.signal(credentialProvidedSignal, { provider: 'acme', userId: 'alice' });
    // The owner decides once their conversation has moved too: the run's gate, shown there, is carried as a gate,
    // not as a turn to resume.
    await onToday(owner, 'the owner’s conversation');
    await owner.decide({ gateId: gates.mission!.id, choice: 'approve' });

    const webView = await web.waitFor(
      (v) => v.status === 'idle' && toolResults(v).length === 1 && v.queued === 0,
      'the web turn and the queued message answered',
    );
    expect(toolResults(webView)[0]).toMatchObject({ status: 'ok' });
    expect(
      readFileSync(
        path.join(config.dataDir, 'workdirs', web.workflowId.replace(/:/g, '_'), 'web.txt'),
        'utf8',
      ),
    ).toBe('web\n');
    const slackView = await inSlack.idle();
    expect(toolResults(slackView)).toEqual([expect.objectContaining({ status: 'ok' })]);
    const askedView = await asked.idle();
    expect(toolResults(askedView)[1]!.content).toContain('staging');
    // The standing approval given under 0.1 is kept (listed, revocable), but it was a grant of every shell command
    // from a button that did not say so: today it no longer applies, and the prompt says why.
    expect(askedView.grants).toHaveLength(1);
    // A decision made while the conversation ran on 0.1 has 0.1's meaning ("always" = every command); the new grant
    // below is made on today's version.
    await asked.say('run `echo still granted`');
    const [again] = await asked.pendingGate();
    expect(again!.subject).toBe('echo still granted');
    await asked.decide({ gateId: again!.id, choice: 'always', scope: 'session' });
    const granted = await asked.waitFor(
      (v) => v.status === 'idle' && toolResults(v).length === 3,
      'the call approved again',
    );
    expect(toolResults(granted)[2]).toMatchObject({ status: 'ok' });
    // The new grant is exactly that command.
    expect(granted.grants.map((g) => g.pattern)).toContain('echo still granted');
    const signInView = await signIn.waitFor(
      (v) => v.status === 'idle' && toolResults(v).length === 1,
      'the call after the sign-in',
    );
    expect(toolResults(signInView)[0]!.status).not.toBe('denied');
    // A run moved by the drain and then approved reports through its mission: give a loaded machine time for both.
    // A loaded CI machine (two cores, the whole suite) has taken more than 90 s here: three minutes.
    await missionAnswered(owner, 'nightly', 1, 180_000);
    // The owner's conversation was idle (its only open gate is the run's): carried over, it answers nothing new.
    const answers = (view: Awaited<ReturnType<TestSession['state']>>) =>
      view.transcript.filter((m) => m.role === 'assistant' && !m.synthetic).length;
    expect(answers(await owner.state())).toBe(answers(before[4]!));

    // Transcripts kept: everything said under 0.1 is still there, in order.
    for (const [index, session] of [web, inSlack, asked, signIn].entries()) {
      const view = await session.state();
      const earlier = before[index]!.transcript.map((m) => m.id);
      expect(view.transcript.map((m) => m.id).slice(0, earlier.length)).toEqual(earlier);
    }

    // The mission itself moves once its run has ended, and fires on today's code.
    const missionId = gates.mission!.remote!.workflowId.replace(/^mission-run:([^:]+):\d+$/, 'mission:$1');
    await until('the 0.1 mission carried over', async () =>
      (await runsOf(env.client, `WorkflowId = '${missionId}' AND ExecutionStatus = 'Terminated'`)).length
        ? true
        : undefined,
    );
    await owner.say('call mission_fire "nightly"');
    const second = await owner.waitFor(
      (v) => v.gates.some((g) => g.remote && g.status === 'pending' && g.id !== gates.mission!.id),
      'run 2’s gate',
    );
    const gate2 = second.gates.find((g) => g.remote && g.status === 'pending' && g.id !== gates.mission!.id)!;
    await owner.decide({ gateId: gate2.id, choice: 'approve' });
    await missionAnswered(owner, 'nightly', 2);

    // Every conversation now runs on today's version; no run anywhere failed a task on nondeterminism.
    for (const session of [web, inSlack, asked, signIn, owner]) {
      const described = await session.handle.describe();
      expect(described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe(current);
    }
    // Each 0.1 conversation was carried over by ending its 0.1 run, once.
    for (const session of [web, inSlack, asked, signIn, owner]) {
      const runs = await runsOf(
        env.client,
        `WorkflowId = '${session.workflowId}' AND ExecutionStatus = 'Terminated'`,
      );
      expect(runs).toHaveLength(1);
    }
    const all = await runsOf(env.client, `TaskQueue = '${taskQueue}'`);
    expect(all.length).toBeGreaterThan(10);
    expect(await nondeterminismIn(env.client, all)).toEqual([]);
    expect(lastAnswer(await web.state())).not.toBe('');

    // The check of which runs need 0.1's code replayed them in a workflow thread of its own: this process (the
    // worker's activities, its gRPC calls) was left without the SDK's promise hook and stack-trace handler, which
    // would otherwise capture a stack trace for every promise it makes from then on.
    expect(Error.prepareStackTrace).toBe(stackHandler);
    expect(process.listenerCount('unhandledRejection')).toBe(rejectionHandlers);

    // A run started since today's version became current is unversioned only until its first task (here an hour
    // away): the sweep sees it but does not fetch and replay it as a possible 0.1 run.
    const fresh = await env.client.workflow.start('sessionWorkflow', {
      taskQueue,
      workflowId: `fresh-${randomUUID()}`,
      args: [{}],
      startDelay: '1 hour',
    });
    const legacy = new LegacyRecovery({
      client: env.client,
      namespace: 'default',
      taskQueue,
      deploymentName: taskQueue,
      bundlesDir: bundles,
      currentBundle: path.join(bundles, todays[0]!),
      dataConverter: undefined,
      startDrainWorker: () => Promise.reject(new Error('no drain worker in this check')),
      log: createLogger('worker', 'error'),
    });
    const replays = vi.spyOn(Worker, 'runReplayHistories');
    const drain = new Drain({
      client: env.client,
      namespace: 'default',
      taskQueue,
      version: { deploymentName: taskQueue, buildId: current! },
      bundlesDir: bundles,
      ratePerSecond: 20,
      startDrainWorker: () => Promise.reject(new Error('no drain worker in this check')),
      legacy,
      log: createLogger('worker', 'error'),
    });
    const seen = await until('the fresh run listed as unversioned', async () => {
      const report = await drain.sweep();
      return report.waiting.unversioned ? report : undefined;
    });
    expect(seen.waiting.unversioned).toBe(1);
    expect(replays).not.toHaveBeenCalled();
    // A worker starting now makes the same check before promoting (workers/run-worker.ts) and skips it too.
    const at = (await env.client.workflow.getHandle(fresh.workflowId).describe()).startTime;
    const since = new Date(at.getTime() - 1_000);
    const listed = {
      workflowId: fresh.workflowId,
      runId: fresh.firstExecutionRunId,
      type: 'sessionWorkflow',
    };
    expect(await legacy.adopt([{ ...listed, buildId: undefined, startTime: at }], since)).toBe(0);
    expect(replays).not.toHaveBeenCalled();
    replays.mockRestore();
    await drain.stop();
    await legacy.stop();
    await fresh.terminate('checked');
  }, 420_000);
});

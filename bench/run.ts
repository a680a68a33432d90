/**
 * `npm run bench`: figures for the paths people feel, against a real local Temporal dev server, a real
 * worker and the real gateway (in this process), with the scripted model (so the numbers are the
 * runtime's, not a model's). Prints a table, writes bench/results/<time>.json and latest.json, and draws
 * bench/results/latest.png. Never fails on time.
 *
 * BENCH_ROUNDS (20), BENCH_PARKED ("1000,10000"), BENCH_CACHED (500), BENCH_LONG_TURNS (500), BENCH_TABS (200),
 * BENCH_RECOVERY_RUNS (10), BENCH_MEMORY_WORKFLOWS (200), BENCH_ORG_PARKED (10,000), BENCH_ORG_PEOPLE (1,000), BENCH_ORG_MISSIONS (100,000),
 * BENCH_DRAIN_PARKED (10,000) size the runs, BENCH_DRAIN_RATE (20) paces the drain; BENCH_SECTIONS picks some of
 * latency, floor, memory, parked, replay, history, cache, tabs, recovery, org, drain (all); BENCH_PARKED_KINDS some of bare, fair, steps (opt-in), session, session-question
 * (all); BENCH_REPLAYS (500) how often the replay section replays each parked history; BENCH_HISTORY_TURNS (10,100)
 * the two turns whose history cost the history section compares.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { loadConfig, type AppConfig } from '../infra/config';
import { TEST_GATEWAY_KEY } from '../test/helpers/config';
import { createLogger } from '../infra/log';
import { startGateway, type RunningGateway } from '../gateways/serve';
import { bundleWorkflows, workflowCode } from '../workers/workflow-code';
import { decideSignal } from '../workflows/session/contract';
import { freePort } from '../test/helpers/processes';
import { TestSession } from '../test/helpers/session';
import { startTestTemporal } from '../test/helpers/temporal';
import { drawChart } from './chart';
import { measureIdleTabs, measureRecovery } from './recovery';
import { measureFloor } from './floor/measure';
import { measureMemory } from './floor/memory';
import { measureParked, type ParkedKind } from './floor/parked';
import { measureReplay, measureWatchdog } from './floor/replay';
import { measureDiscordAcks } from './discord-acks';
import { measureHistoryGrowth } from './history-growth';
import { measurePromptCache } from './prompt-cache';
import { measureOrg } from './org';
import { sealingClient } from '../infra/temporal/sealing-interceptor';
import { measureOrgMissions } from './org-missions';
import { measureDrain } from './org-drain';
import { activityHeartbeats } from '../activities/heartbeat';
import { stat, type Stat } from './stat';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const PARKED = (process.env.BENCH_PARKED ?? '1000,10000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const LONG_TURNS = Number(process.env.BENCH_LONG_TURNS ?? 500);
const QUEUE = 'bench';
/** The worker's workflow cache in the parked-sessions run (WORKER_MAX_CACHED_WORKFLOWS). */
const CACHED = Number(process.env.BENCH_CACHED ?? 500);
const TABS = Number(process.env.BENCH_TABS ?? 200);
const RECOVERY_RUNS = Number(process.env.BENCH_RECOVERY_RUNS ?? 10);
const MEMORY_WORKFLOWS = Number(process.env.BENCH_MEMORY_WORKFLOWS ?? 200);
const REPLAYS = Number(process.env.BENCH_REPLAYS ?? 500);
const ORG_PARKED = Number(process.env.BENCH_ORG_PARKED ?? 10_000);
const ORG_PEOPLE = Number(process.env.BENCH_ORG_PEOPLE ?? 1_000);
const ORG_MISSIONS = Number(process.env.BENCH_ORG_MISSIONS ?? 100_000);
const DRAIN_PARKED = Number(process.env.BENCH_DRAIN_PARKED ?? 10_000);
const DRAIN_RATE = Number(process.env.BENCH_DRAIN_RATE ?? 20);
/** The two turns of one conversation whose history cost is compared (BENCH_HISTORY_TURNS, "10,100"). */
const HISTORY_TURNS = (process.env.BENCH_HISTORY_TURNS ?? '10,100').split(',').map(Number) as [
  number,
  number,
];
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? 'all').split(',').map((s) => s.trim()));
const want = (section: string) => SECTIONS.has('all') || SECTIONS.has(section);

const line = (label: string, s: Stat) =>
  `${label.padEnd(52)} n=${String(s.n).padStart(4)}  p50 ${String(s.p50).padStart(7)} ms  p95 ${String(s.p95).padStart(7)} ms  p99 ${String(s.p99).padStart(7)} ms`;

function newWorker(env: Awaited<ReturnType<typeof startTestTemporal>>, config: AppConfig) {
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue: QUEUE,
    ...workflowCode(),
    ...activityHeartbeats,
    activities: createActivities({ config, client: env.client }),
    // A bounded cache: parked sessions are evicted and replayed on demand, so memory stays flat.
    maxCachedWorkflows: 500,
  });
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-bench-'));
  const policyFile = path.join(dataDir, 'agent.config.json');
  writeFileSync(policyFile, JSON.stringify({ continueAsNewAfterEvents: 2_000 }));
  const metricsPort = await freePort();
  const env = await startTestTemporal({ metricsPort, cacheSearchAttributes: true, visibilityRate: true });
  const port = await freePort();
  const config = loadConfig({
    DATA_DIR: dataDir,
    AGENT_CONFIG: policyFile,
    // The bench's sessions play a gateway and seal with this key (test/helpers/session.ts).
    GATEWAY_KEY: TEST_GATEWAY_KEY,
    TEMPORAL_TASK_QUEUE: QUEUE,
    PORT: String(port),
    LOG_LEVEL: 'error',
    // Clicks come as a signing-in proxy on loopback would send them (the access check is part of the cost).
    WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
    WEB_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
    WEB_RATE_MESSAGES: '100000',
    WEB_RATE_SESSIONS: '100000',
  });
  const gateway: RunningGateway = await startGateway(config, env.address, createLogger('bench', 'error'));
  const results: Record<string, unknown> = {};
  const lines: string[] = [];
  /** Figures are printed as they come (a long run shows progress) and again together at the end. */
  const note = (text: string) => {
    lines.push(text);
    process.stdout.write(`${text}\n`);
  };
  const post = async (body: unknown) => {
    const start = performance.now();
    const response = await fetch(`${gateway.url}/api/decisions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-user': 'alice' },
      body: JSON.stringify(body),
    });
    await response.text();
    return { ms: performance.now() - start, status: response.status };
  };
  const ranTools = (s: TestSession, n: number) =>
    s.waitFor(
      (v) =>
        v.status === 'idle' &&
        v.transcript.filter((m) => m.role === 'tool').length === n &&
        v.transcript.at(-1)?.role === 'assistant',
      'tool run',
    );

  if (want('latency')) {
    let worker = await newWorker(env, config);
    let long: TestSession | undefined;
    let short: TestSession | undefined;
    await worker.runUntil(async () => {
      // 1. Everyday latencies, and click-to-resume through the gateway vs a bare signal to the same workflow.
      const plain: number[] = [];
      const viaGateway: number[] = [];
      const bare: number[] = [];
      const acks: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const s = new TestSession(env.client, QUEUE);
        s.pollMs = 5;
        let start = performance.now();
        await s.say(`hello ${i}`);
        await s.idle();
        plain.push(performance.now() - start);
        for (const [mode, samples] of [
          ['gateway', viaGateway],
          ['bare', bare],
        ] as const) {
          const before = (await s.state()).transcript.filter((m) => m.role === 'tool').length;
          await s.say('run `true`');
          const [gate] = await s.pendingGate();
          start = performance.now();
          if (mode === 'gateway') {
            const ack = await post({ workflowId: s.workflowId, gateId: gate!.id, choice: 'approve' });
            acks.push(ack.ms);
          } else
            await s.handle.signal(decideSignal, { gateId: gate!.id, choice: 'approve', userId: 'alice' });
          await ranTools(s, before + 1);
          samples.push(performance.now() - start);
        }
      }
      results.plainMessage = stat(plain);
      results.clickToResumeGateway = stat(viaGateway);
      results.clickToResumeBareSignal = stat(bare);
      results.gatewayOverBareRatio = Number((stat(viaGateway).p50 / stat(bare).p50).toFixed(2));
      results.ackWorkerUp = stat(acks);
      note(line('message -> answer', stat(plain)));
      note(line('click via gateway -> tool ran -> answer', stat(viaGateway)));
      note(line('bare client signal -> tool ran -> answer', stat(bare)));
      note(
        `${'  gateway / bare signal (p50)'.padEnd(52)} ${results.gatewayOverBareRatio}x (target <= 1.25x)`,
      );
      note(line('gateway acknowledgement of a click, worker up', stat(acks)));

      // 2. Long sessions for the restart comparison: 10 turns and LONG_TURNS turns.
      for (const [turns, assign] of [
        [10, (s: TestSession) => (short = s)],
        [LONG_TURNS, (s: TestSession) => (long = s)],
      ] as const) {
        const s = new TestSession(env.client, QUEUE);
        s.pollMs = 5;
        for (let i = 0; i < turns; i++) {
          await s.say(i % 10 === 0 ? 'what time is it' : `turn ${i}`);
          await s.waitFor(
            (v) =>
              v.status === 'idle' &&
              v.queued === 0 &&
              v.transcript.filter((m) => m.role === 'user').length === i + 1 &&
              v.transcript.at(-1)?.role === 'assistant',
            `turn ${i}`,
          );
        }
        assign(s);
      }
    });

    // 3. Clicks acknowledged while no worker runs at all.
    const downAcks: number[] = [];
    const parkedForDown: TestSession[] = [];
    await (
      await newWorker(env, config)
    ).runUntil(async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const s = new TestSession(env.client, QUEUE);
        await s.say('run `true`');
        await s.pendingGate();
        parkedForDown.push(s);
      }
    });
    for (const s of parkedForDown) {
      // The signal is what the gateway waits for; the workflow checks the gate later, when a worker runs.
      const ack = await post({
        workflowId: s.workflowId,
        gateId: 'not-needed-for-timing',
        choice: 'approve',
      });
      if (ack.status === 202) downAcks.push(ack.ms);
    }
    results.ackWorkerDown = stat(downAcks);
    note(line('gateway acknowledgement of a click, NO worker running', stat(downAcks)));

    // 3b. Discord interactions while no worker runs: Discord gives up after 3 s; the target is 1 s at p99.
    const discord = await measureDiscordAcks(env, ROUNDS);
    results.discordAckWorkerDown = stat(discord.approve);
    results.discordEditDialogWorkerDown = stat(discord.editDialog);
    note(line('Discord click answered, NO worker running', stat(discord.approve)));
    note(line('Discord Edit & approve… dialog, NO worker running', stat(discord.editDialog)));

    // 4. Resume after a worker restart: a 10-turn vs a LONG_TURNS-turn session (continue-as-new keeps them alike).
    const resume: Record<string, number> = {};
    for (const [label, s] of [
      ['10', short!],
      [String(LONG_TURNS), long!],
    ] as const) {
      worker = await newWorker(env, config);
      const start = performance.now();
      await worker.runUntil(async () => {
        await s.say('after restart');
        await s.waitFor(
          (v) =>
            v.status === 'idle' &&
            v.transcript.some((m) => m.role === 'user' && m.text === 'after restart') &&
            v.transcript.at(-1)?.role === 'assistant',
          'answer after restart',
        );
      });
      resume[label] = Number((performance.now() - start).toFixed(0));
    }
    results.resumeAfterRestartMs = resume;
    results.resumeLongOverShortRatio = Number((resume[String(LONG_TURNS)]! / resume['10']!).toFixed(2));
    note(
      `${`new worker -> answer: 10-turn / ${LONG_TURNS}-turn session`.padEnd(52)} ${resume['10']} ms / ${resume[String(LONG_TURNS)]} ms (${results.resumeLongOverShortRatio}x, target <= 2x)`,
    );
  }

  // Against the floor: one session's message -> answer vs a bare workflow's signal -> activity -> answer.
  if (want('floor')) {
    const floor = await measureFloor({
      client: env.client,
      connection: env.nativeConnection,
      sessionQueue: QUEUE,
      rounds: ROUNDS,
      runSessionWorker: async (fn) => await (await newWorker(env, config)).runUntil(fn),
    });
    results.floorMessage = { bare: stat(floor.bare), session: stat(floor.session) };
    results.floorMessageRatio = Number((stat(floor.session).p50 / stat(floor.bare).p50).toFixed(2));
    note(line('bare workflow: signal -> activity -> answer (floor)', stat(floor.bare)));
    note(line('session: message -> answer, same way', stat(floor.session)));
    note(`${'session over floor, p50'.padEnd(52)} ${results.floorMessageRatio}x (goal <= 1.5x)`);
    results.floorFirstMessage = { bare: stat(floor.firstBare), session: stat(floor.firstSession) };
    note(line('bare workflow: first signal (with start) -> answer', stat(floor.firstBare)));
    note(line('session: first message of a conversation -> answer', stat(floor.firstSession)));
  }

  // Memory per cached workflow against the floor, each kind in a process of its own (#20 goal 1).
  if (want('memory')) {
    const memory = await measureMemory(env.address, path.join(dataDir, 'memory-bundles'), MEMORY_WORKFLOWS);
    results.memory = memory;
    const kib = (f: { heapKiB: number; rssKiB: number }) => `heap ${f.heapKiB} KiB, resident ${f.rssKiB} KiB`;
    note(`${'bare workflow, per cached workflow (floor)'.padEnd(52)} ${kib(memory.bare)}`);
    note(`${'session, per cached session'.padEnd(52)} ${kib(memory.session)} (goal <= 1024 KiB)`);
    note(`${'session with nothing shared (before)'.padEnd(52)} ${kib(memory.sessionUnshared)}`);
    note(
      `${'session over floor'.padEnd(52)} heap ${memory.heapRatio}x, resident ${memory.rssRatio}x (goal <= 2.5x)`,
    );
    const { compacted } = memory;
    note(
      `${'  once V8 returns its free pages: bare, session'.padEnd(52)} resident ${compacted.bare.rssKiB} KiB, ${compacted.session.rssKiB} KiB (${compacted.rssRatio}x)`,
    );
    for (const m of memory.modules) note(`${`  module: ${m.label}`.padEnd(52)} +${m.heapKiB} KiB heap`);
  }

  // 6. Open web tabs on idle sessions: what they cost the server (queries/s) and this process (worker + gateway).
  if (want('tabs')) {
    const tabs = await (
      await newWorker(env, config)
    ).runUntil(() =>
      measureIdleTabs({
        client: env.client,
        queue: QUEUE,
        gatewayUrl: gateway.url,
        metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
        tabs: TABS,
        quietSeconds: 10,
      }),
    );
    results.idleTabs = tabs;
    note(
      `${`${tabs.tabs} open tabs on idle sessions, 10 s`.padEnd(52)} ${tabs.queriesPerSecond} queries/s (polling: ${(tabs.tabs * 2.5).toFixed(0)}/s), worker + gateway CPU ${tabs.cpuPercent} %`,
    );
  }

  // 7. Recovery after a crash, with real worker processes.
  if (want('recovery')) {
    const recovery = await measureRecovery({
      client: env.client,
      address: env.address,
      dataDir,
      policyFile,
      runs: RECOVERY_RUNS,
      stat,
    });
    results.recovery = recovery;
    note(`${'workflow bundle built once (then reused)'.padEnd(52)} ${recovery.bundleBuildMs} ms`);
    for (const sticky of ['sticky 1s', 'sticky 10s', 'sticky 1s compiled'] as const) {
      note(line(`new worker start -> polling (${sticky})`, recovery[sticky]!.startMs));
      note(
        line(`polling -> click made while down took effect (${sticky})`, recovery[sticky]!.clickAfterPollMs),
      );
    }
  }

  // What prompt caching saves on turn 20 of a conversation (issue 54), against fakes that report cached tokens.
  if (want('cache')) {
    const figures = await measurePromptCache(20);
    results.promptCache = figures;
    for (const f of figures)
      note(
        `${`${f.provider}: turn ${f.turns} input billed, without / with caching`.padEnd(52)} ${f.billedWithout} / ${f.billedWith} tokens (${f.cachedTokens} of ${f.inputTokens} read from the cache)`,
      );
  }

  // What one turn adds to history early and late in one conversation (issue 36: flat in conversation length).
  if (want('history')) {
    const worker = await newWorker(env, config);
    const growth = await worker.runUntil(
      measureHistoryGrowth(env.client, QUEUE, HISTORY_TURNS[0], HISTORY_TURNS[1]),
    );
    results.historyPerTurn = growth;
    note(
      `${`history added by turn ${growth.early.turn} / turn ${growth.late.turn}`.padEnd(52)} ${growth.early.bytes} B, ${growth.early.events} events / ${growth.late.bytes} B, ${growth.late.events} events (${growth.ratio}x, goal <= 1.5x)`,
    );
  }

  // The worker's share of a resume alone: one replay of a parked session against one of a parked bare workflow.
  if (want('replay')) {
    const replay = await measureReplay({
      sessionCode: await bundleWorkflows(),
      bareCode: (await bundleWorkflowCode({ workflowsPath: require.resolve('./floor/bare-workflow') })).code,
      count: REPLAYS,
    });
    const watchdog = measureWatchdog();
    results.replay = { ...replay, watchdog };
    for (const [label, cost] of [
      ['bare workflow (floor)', replay.bare],
      ['session on a question', replay.session],
    ] as const) {
      const capture =
        cost.withoutStackCaptureMs === undefined
          ? ''
          : `; ${(cost.cpuMs - cost.withoutStackCaptureMs).toFixed(2)} ms of it the SDK's stack capture`;
      note(
        `${`replay of a parked ${label}`.padEnd(52)} ${cost.cpuMs} ms CPU, ${cost.promises} workflow promises, ${cost.workflowTasks} workflow tasks, ${cost.sandboxCalls} calls into the sandbox${capture}`,
      );
    }
    note(
      `${'one call into the sandbox (5 s timeout: a watchdog thread)'.padEnd(52)} ${watchdog.withTimeoutUs} us CPU (${watchdog.withoutUs} us without a timeout)`,
    );
  }

  // Parked sessions against parked bare workflows (#20 goal 2): each kind in a real worker process with the same
  // bounded cache; its RSS once all are parked, then the rate the bench resolves them at, and who was busy.
  if (want('parked')) {
    const bundlePath = path.join(dataDir, 'workflow-bundle.js');
    writeFileSync(bundlePath, await bundleWorkflows());
    const bareBundlePath = path.join(dataDir, 'bare-bundle.js');
    writeFileSync(
      bareBundlePath,
      (await bundleWorkflowCode({ workflowsPath: require.resolve('./floor/bare-workflow') })).code,
    );
    const parked = await measureParked({
      client: env.client,
      address: env.address,
      counts: PARKED,
      cached: CACHED,
      ...(process.env.BENCH_PARKED_KINDS
        ? { kinds: process.env.BENCH_PARKED_KINDS.split(',') as ParkedKind[] }
        : {}),
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      session: {
        queue: QUEUE,
        env: {
          DATA_DIR: dataDir,
          AGENT_CONFIG: policyFile,
          TEMPORAL_TASK_QUEUE: QUEUE,
          WORKFLOW_BUNDLE_PATH: bundlePath,
        },
      },
      bare: { bundlePath: bareBundlePath },
    });
    results.parked = parked;
    for (const run of parked)
      note(
        `${`${run.parked} parked, ${run.kind} (cache ${CACHED})`.padEnd(52)} worker RSS ${run.rssMiB} MiB parked, peak ${run.peakRssMiB} MiB; parked in ${run.parkSeconds} s; resolved at ${run.resumesPerSecond}/s, all signalled after ${run.signalledSeconds} s of ${run.resolveSeconds} (CPU: worker ${run.cpuPercent.worker} %, server ${run.cpuPercent.server} %, bench ${run.cpuPercent.bench} %, machine ${run.cpuPercent.machine} % of ${os.cpus().length * 100})${
          run.perResume
            ? `; per resume: ${run.perResume.serviceRequests.total} server calls, ${run.perResume.persistenceRequests.total} database operations ${JSON.stringify(run.perResume.persistenceRequests.top)}`
            : ''
        }`,
      );
    // Each session kind over the floor resolved in the same run: what a parked conversation costs to resume.
    const ratios = (kind: 'session' | 'session-question' | 'steps', floor: 'bare' | 'fair' | 'steps') =>
      Object.fromEntries(
        PARKED.flatMap((count) => {
          const of = (k: string) => parked.find((r) => r.parked === count && r.kind === k);
          const [session, base] = [of(kind), of(floor)];
          return session && base
            ? [[count, Number((session.resumesPerSecond / base.resumesPerSecond).toFixed(2))]]
            : [];
        }),
      );
    results.parkedResumeRatio = ratios('session', 'bare');
    results.parkedQuestionResumeRatio = ratios('session-question', 'bare');
    // The goal (issue 36) is against the fair floor: the same durable steps as a resume.
    results.parkedResumeOverFairFloor = ratios('session', 'fair');
    results.parkedQuestionResumeOverFairFloor = ratios('session-question', 'fair');
    // With the opt-in `steps` kind: what a session's own durable steps cost over the fair floor, and what its code
    // adds over those steps.
    results.parkedStepsOverFairFloor = ratios('steps', 'fair');
    results.parkedQuestionResumeOverSteps = ratios('session-question', 'steps');
    for (const [label, table, goal] of [
      ['approved shell command over bare floor', results.parkedResumeRatio, ''],
      ['answered question over bare floor', results.parkedQuestionResumeRatio, ''],
      ['approved shell command over fair floor', results.parkedResumeOverFairFloor, ' (goal >= 0.9x)'],
      ['answered question over fair floor', results.parkedQuestionResumeOverFairFloor, ' (goal >= 0.9x)'],
      ["a session's durable steps over fair floor", results.parkedStepsOverFairFloor, ''],
      ['answered question over its durable steps', results.parkedQuestionResumeOverSteps, ''],
    ] as const)
      for (const [count, ratio] of Object.entries(table as Record<string, number>))
        note(`${`${count} parked, ${label}`.padEnd(52)} ${ratio}x${goal}`);
  }

  // 9. An organization: "Needs you" with ORG_PARKED waiting conversations across ORG_PEOPLE people.
  if (want('org')) {
    const orgQueue = `${QUEUE}-org`;
    const orgConfig = { ...config, temporal: { ...config.temporal, taskQueue: orgQueue } };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: orgQueue,
      ...workflowCode(),
      ...activityHeartbeats,
      activities: createActivities({ config: orgConfig, client: env.client }),
      maxCachedWorkflows: 500,
    });
    const org = await measureOrg({
      client: sealingClient(env.client, TEST_GATEWAY_KEY),
      queue: orgQueue,
      worker,
      gatewayUrl: gateway.url,
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      parked: ORG_PARKED,
      people: ORG_PEOPLE,
      stat,
      note,
    });
    results.org = org;
    note(`${'org: the first inbox read after parking'.padEnd(52)} ${org.firstReadMs} ms`);
    note(line('org: inbox read, a person with 3 waiting', org.readThree));
    note(line(`org: inbox read, first page of ${org.leadTotal} waiting`, org.readLead));
    note(`${`org: all pages of the ${org.leadTotal}`.padEnd(52)} ${org.leadAllPagesMs} ms`);
    note(`${'org: 20 people reading at once'.padEnd(52)} ${org.twentyAtOnceMs} ms for all`);
    note(`${'org: server calls per read'.padEnd(52)} ${JSON.stringify(org.serverCallsPerRead)}`);
    note(
      `${`org: ${org.idleTabs.tabs} inbox tabs open, nothing changing, ${org.idleTabs.seconds} s`.padEnd(52)} ${org.idleTabs.workerQueriesPerSecond} worker queries/s (goal 0), ${org.idleTabs.visibilityCallsPerSecond} visibility calls/s`,
    );
    const missions = await measureOrgMissions({
      client: env.client,
      config: orgConfig,
      worker: await Worker.create({
        connection: env.nativeConnection,
        taskQueue: orgQueue,
        ...workflowCode(),
        ...activityHeartbeats,
        activities: createActivities({ config: orgConfig, client: env.client }),
      }),
      missions: ORG_MISSIONS,
      owners: ORG_PEOPLE,
      stat,
      note,
    });
    results.orgMissions = missions;
    note(line(`org: create a mission by name (${missions.missions} exist)`, missions.create));
    note(line('org: fire a mission by name', missions.fireByName));
    note(line("org: read someone's shared mission by name", missions.readSharedByName));
    note(line("org: read one's own directory", missions.listOwn));
  }

  // 10. A deploy's drain with DRAIN_PARKED parked conversations, on a dev server of its own paced at DRAIN_RATE.
  if (want('drain')) {
    // A drain that fails is reported, and the other sections' figures are still written.
    const drain = await measureDrain({ parked: DRAIN_PARKED, rate: DRAIN_RATE, stat, note }).catch(
      (error: unknown) => {
        note(`drain: the section failed: ${(error as Error).message.split('\n')[0]}`);
        results.drainFailed = (error as Error).message.split('\n')[0];
        return undefined;
      },
    );
    if (drain) {
      results.drain = drain;
      note(
        `${`drain: ${drain.parked} parked moved to N+1 at ${drain.rate}/s`.padEnd(52)} in ${drain.drainSeconds} s (${drain.movedPerSecond}/s)`,
      );
      note(line('drain: click → effect during the drain', drain.clickToEffect));
      note(line('drain: message → answer during the drain', drain.messageToAnswer));
      note(line('drain: click → effect after it', drain.clickAfter));
      note(line('drain: message → answer after it', drain.messageAfter));
      note(`${'drain: samples that did not complete in 10 min'.padEnd(52)} ${drain.samplesFailed}`);
    }
  }

  await gateway.close();
  await env.teardown();
  const header = `Benchmark ${new Date().toISOString()} (scripted model, local dev server, worker + gateway in process, ${os.cpus().length} CPUs, Node ${process.version})`;
  process.stdout.write(`\n${header}\n${lines.join('\n')}\n\n`);
  const dir = path.resolve(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const report = {
    at: new Date().toISOString(),
    cpus: os.cpus().length,
    node: process.version,
    rounds: ROUNDS,
    ...results,
  };
  const json = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(path.join(dir, `${report.at.replace(/[:.]/g, '-')}.json`), json);
  // A partial run (BENCH_SECTIONS) keeps its figures in its own file and leaves the full run's latest.* alone.
  if (!SECTIONS.has('all')) {
    process.stdout.write(`wrote bench/results/${report.at.replace(/[:.]/g, '-')}.json (partial run)\n`);
    return;
  }
  writeFileSync(path.join(dir, 'latest.json'), json);
  const png = await drawChart(report, path.join(dir, 'latest.png')).catch(
    (error: Error) => `not drawn (${error.message})`,
  );
  process.stdout.write(`wrote bench/results/latest.json and ${png}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

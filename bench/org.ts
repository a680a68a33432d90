/**
 * The `org` section: "Needs you" at an organization's size. PARKED conversations wait on an approval each, asked by
 * PEOPLE people (a few with 3 waiting, one lead with 500, everyone else an even share); then each kind of person reads
 * their inbox through the gateway, 20 read at once, and 100 inbox tabs sit open while nothing changes. What it
 * reports: read latency, the server calls a read costs, and the worker queries a second the idle tabs cost (goal 0).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { webSessionWorkflowId } from '../common/ids';
import { userMessageSignal, type SessionInput } from '../workflows/session/contract';
import type { InboxList } from '../gateways/web/inbox';
import { SseTab } from '../test/helpers/sse';
import { countersByOperation } from './floor/server-metrics';
import type { Stat } from './stat';

export interface OrgFigures {
  parked: number;
  people: number;
  parkSeconds: number;
  firstReadMs: number;
  readThree: Stat;
  readLead: Stat;
  leadTotal: number;
  leadAllPagesMs: number;
  twentyAtOnceMs: number;
  serverCallsPerRead: Record<string, number>;
  idleTabs: {
    tabs: number;
    seconds: number;
    workerQueriesPerSecond: number;
    visibilityCallsPerSecond: number;
  };
}

const THREE = 20;
const LEAD_ITEMS = 500;

export async function measureOrg(options: {
  client: Client;
  queue: string;
  worker: Worker;
  gatewayUrl: string;
  metricsUrl: string;
  parked: number;
  people: number;
  stat: (samples: number[]) => Stat;
  note: (text: string) => void;
}): Promise<OrgFigures> {
  const { client, queue, stat } = options;
  const requesters: string[] = [];
  for (let i = 0; i < THREE; i++) requesters.push(...Array<string>(3).fill(`three${i}`));
  requesters.push(...Array<string>(LEAD_ITEMS).fill('lead'));
  const rest = Math.max(0, options.parked - requesters.length);
  for (let i = 0; i < rest; i++) requesters.push(`person${i % options.people}`);

  return await options.worker.runUntil(async () => {
    const started = performance.now();
    for (let i = 0; i < requesters.length; i += 50)
      await Promise.all(
        requesters.slice(i, i + 50).map((person) => {
          const sessionId = randomUUID();
          const input: SessionInput = { sessionId, channel: 'web', ownerId: person };
          return client.workflow.signalWithStart('sessionWorkflow', {
            workflowId: webSessionWorkflowId(sessionId),
            taskQueue: queue,
            args: [input],
            signal: userMessageSignal,
            signalArgs: [{ messageId: randomUUID(), userId: person, text: 'run `true`' }],
          });
        }),
      );
    const waiting = `TaskQueue = '${queue}' AND ExecutionStatus = 'Running' AND AgentStatus = 'waiting_approval'`;
    for (;;) {
      const { count } = await client.workflow.count(waiting);
      if (count >= requesters.length) break;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    const parkSeconds = Number(((performance.now() - started) / 1000).toFixed(0));
    options.note(
      `${`org: ${requesters.length} parked across ${options.people + THREE + 1} people`.padEnd(52)} in ${parkSeconds} s`,
    );

    const read = async (person: string, cursor?: string) => {
      const t0 = performance.now();
      const response = await fetch(`${options.gatewayUrl}/api/inbox${cursor ? `?cursor=${cursor}` : ''}`, {
        headers: { 'x-forwarded-user': person },
      });
      const list = (await response.json()) as InboxList;
      if (response.status !== 200) throw new Error(`inbox read refused: ${JSON.stringify(list)}`);
      return { ms: performance.now() - t0, list };
    };
    // The first read after parking is told apart: it finds the server's visibility store cold.
    const firstReadMs = Number((await read('three0')).ms.toFixed(1));
    const before = await countersByOperation(options.metricsUrl, 'service_requests');
    const three: number[] = [];
    for (let i = 0; i < 100; i++) {
      const { ms, list } = await read(`three${i % THREE}`);
      if (list.items.length !== 3) throw new Error(`three${i % THREE} sees ${list.items.length}, not 3`);
      three.push(ms);
    }
    const lead: number[] = [];
    let leadTotal = 0;
    for (let i = 0; i < 100; i++) {
      const { ms, list } = await read('lead');
      leadTotal = list.total;
      lead.push(ms);
    }
    const after = await countersByOperation(options.metricsUrl, 'service_requests');
    const serverCallsPerRead = Object.fromEntries(
      [...after]
        .map(([operation, value]) => [operation, (value - (before.get(operation) ?? 0)) / 200] as const)
        .filter(([, value]) => value >= 0.01)
        .map(([operation, value]) => [operation, Number(value.toFixed(2))]),
    );
    let cursor: string | undefined;
    let seen = 0;
    const walk0 = performance.now();
    do {
      const { list } = await read('lead', cursor);
      seen += list.items.length;
      cursor = list.next;
    } while (cursor);
    const leadAllPagesMs = Number((performance.now() - walk0).toFixed(0));
    if (seen !== LEAD_ITEMS) throw new Error(`the lead paged through ${seen} items, not ${LEAD_ITEMS}`);
    const burst0 = performance.now();
    await Promise.all(Array.from({ length: 20 }, (_, i) => read(`person${i}`)));
    const twentyAtOnceMs = Number((performance.now() - burst0).toFixed(0));

    // 100 open inbox tabs, nothing changing: what they ask of workers (queries) and of visibility.
    const tabs = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        new SseTab(`${options.gatewayUrl}/api/inbox/stream`, { 'x-forwarded-user': `person${i}` }).open(),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const quiet0 = await countersByOperation(options.metricsUrl, 'service_requests');
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const seconds = (performance.now() - t0) / 1000;
    const quiet1 = await countersByOperation(options.metricsUrl, 'service_requests');
    await Promise.all(tabs.map((tab) => tab.close()));
    const delta = (operation: string) => (quiet1.get(operation) ?? 0) - (quiet0.get(operation) ?? 0);
    return {
      parked: requesters.length,
      people: options.people + THREE + 1,
      parkSeconds,
      firstReadMs,
      readThree: stat(three),
      readLead: stat(lead),
      leadTotal,
      leadAllPagesMs,
      twentyAtOnceMs,
      serverCallsPerRead,
      idleTabs: {
        tabs: tabs.length,
        seconds: Number(seconds.toFixed(0)),
        workerQueriesPerSecond: Number((delta('QueryWorkflow') / seconds).toFixed(2)),
        visibilityCallsPerSecond: Number(
          ((delta('ListWorkflowExecutions') + delta('CountWorkflowExecutions')) / seconds).toFixed(1),
        ),
      },
    };
  });
}

/**
 * The `org` section's missions: MISSIONS mission records across OWNERS owners (handed to their directories as the
 * old directory's move does), then sampled people create a mission and fire it by name through the mission tools
 * (as the model's tool call runs them), and others read a shared mission by its name. What it reports: create and
 * fire p50/p99, the shared lookup, and that each owner's directory holds exactly their missions.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { MissionTools } from '../activities/missions';
import type { MissionRecord } from '../common/missions/types';
import type { AppConfig } from '../infra/config';
import { handOverToOwners, ownMissions } from '../infra/missions-directory';
import type { Stat } from './stat';

export interface OrgMissionFigures {
  missions: number;
  owners: number;
  seedSeconds: number;
  create: Stat;
  fireByName: Stat;
  readSharedByName: Stat;
  listOwn: Stat;
}

const SAMPLES = 50;

export async function measureOrgMissions(options: {
  client: Client;
  config: AppConfig;
  worker: Worker;
  missions: number;
  owners: number;
  stat: (samples: number[]) => Stat;
  note: (text: string) => void;
}): Promise<OrgMissionFigures> {
  const { client, config, stat } = options;
  const queue = config.temporal.taskQueue;
  const perOwner = Math.max(1, Math.floor(options.missions / options.owners));
  const owner = (i: number) => `m-owner${i}`;
  const tools = new MissionTools(client, config);
  return await options.worker.runUntil(async () => {
    const seeded = performance.now();
    for (let i = 0; i < options.owners; i += 25) {
      const records: MissionRecord[] = [];
      for (let o = i; o < Math.min(options.owners, i + 25); o++)
        for (let m = 0; m < perOwner; m++)
          records.push({
            id: randomUUID(),
            name: `mission ${m}`,
            ownerId: owner(o),
            shared: false,
            status: 'active',
          });
      await handOverToOwners(client, queue, records);
    }
    const seedSeconds = Number(((performance.now() - seeded) / 1000).toFixed(0));
    options.note(
      `${`org: ${perOwner * options.owners} missions across ${options.owners} owners`.padEnd(52)} in ${seedSeconds} s`,
    );
    const timed = async <T>(work: () => Promise<T>): Promise<[number, T]> => {
      const t0 = performance.now();
      const result = await work();
      return [performance.now() - t0, result];
    };
    const expectOk = (what: string, result: { status: string; content: string }) => {
      if (result.status !== 'ok') throw new Error(`${what}: ${result.content}`);
    };
    const create: number[] = [];
    const fire: number[] = [];
    const list: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const who = { userId: owner((i * 37) % options.owners), sessionId: `bench-missions-${i}` };
      const name = `bench ${i} ${randomUUID().slice(0, 4)}`;
      const args = { name, goal: 'what time is it', cadence: 'manual', notify: 'none', shared: i === 0 };
      const [createMs, created] = await timed(() => tools.run('create', args, who));
      expectOk('create', created);
      create.push(createMs);
      const [fireMs, fired] = await timed(() => tools.run('fire', { name }, who));
      expectOk('fire by name', fired);
      fire.push(fireMs);
      const [listMs, own] = await timed(() => ownMissions(client, who.userId));
      if (own.length < perOwner) throw new Error(`${who.userId}'s directory holds ${own.length} missions`);
      if (own.some((r) => r.ownerId !== who.userId)) throw new Error(`${who.userId} sees others' missions`);
      list.push(listMs);
    }
    // Others read the shared one by name: found through visibility (its name once indexed), among all the rest.
    const shared = `bench 0`;
    const sharedName = (await ownMissions(client, owner(0))).find((r) =>
      r.name.startsWith(`${shared} `),
    )!.name;
    const sharedReads: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const who = { userId: `m-reader${i}`, sessionId: `bench-reader-${i}` };
      for (let tries = 0; ; tries++) {
        const [ms, result] = await timed(() => tools.run('get', { name: sharedName }, who));
        if (result.status === 'ok') {
          if (i > 0) sharedReads.push(ms); // the first waits until the name is indexed
          break;
        }
        if (tries > 50) throw new Error(`the shared mission is not found by name: ${result.content}`);
        await new Promise((resolve) => setTimeout(resolve, 200)); // not indexed yet (visibility is eventual)
      }
    }
    return {
      missions: perOwner * options.owners + SAMPLES,
      owners: options.owners,
      seedSeconds,
      create: stat(create),
      fireByName: stat(fire),
      readSharedByName: stat(sharedReads),
      listOwn: stat(list),
    };
  });
}

/**
 * How fast Discord interactions are answered while no worker runs (a deploy): an Approve click (the
 * signal, then deferred with the verdict to follow) and Edit & approve… (a dialog built from the gate's
 * memo). Discord gives up after 3 s; the target is 1 s at p99. Requests are signed as Discord signs them,
 * the Discord REST API is the tests' local fake, the gateway and a real worker run in this process.
 *
 * Part of `npm run bench`; alone: `npx tsx bench/discord-acks.ts` (BENCH_ROUNDS, default 20).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { loadConfig } from '../infra/config';
import { createLogger } from '../infra/log';
import { startGateway } from '../gateways/serve';
import { workflowCode } from '../workers/workflow-code';
import { DiscordKeys, DiscordRequests, snowflake } from '../test/helpers/discord-requests';
import { FakeDiscord } from '../test/helpers/fake-discord';
import { freePort } from '../test/helpers/processes';
import { startTestTemporal } from '../test/helpers/temporal';

type TestEnv = Awaited<ReturnType<typeof startTestTemporal>>;
const QUEUE = 'bench-discord';

interface Component {
  label?: string;
  custom_id?: string;
  components?: Component[];
}

/** Response times (ms) of Approve clicks and Edit dialogs, `rounds` of each, with no worker running. */
export async function measureDiscordAcks(
  env: TestEnv,
  rounds: number,
): Promise<{ approve: number[]; editDialog: number[] }> {
  const discord = await new FakeDiscord().start();
  const keys = new DiscordKeys();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-bench-discord-'));
  const policyFile = path.join(dataDir, 'agent.config.json');
  writeFileSync(policyFile, '{}');
  const config = loadConfig({
    DATA_DIR: dataDir,
    AGENT_CONFIG: policyFile,
    TEMPORAL_TASK_QUEUE: QUEUE,
    PORT: String(await freePort()),
    LOG_LEVEL: 'error',
    WEB_CHAT: 'off',
    DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests', // the token the fake accepts
    DISCORD_PUBLIC_KEY: keys.publicKeyHex,
    DISCORD_API_URL: discord.url,
    DISCORD_GATEWAY: 'off',
  });
  const gateway = await startGateway(config, env.address, createLogger('bench', 'error'));
  const requests = new DiscordRequests(gateway.url, keys);
  const user = '100000000000000001';
  try {
    // Every session waits on an approval prompt, posted while a worker ran.
    const prompts: { channelId: string; approve: string; edit: string }[] = [];
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: QUEUE,
      ...workflowCode(),
      activities: createActivities({ config, client: env.client }),
    });
    await worker.runUntil(async () => {
      for (let i = 0; i < rounds; i++) {
        const channelId = snowflake();
        await requests.ask(channelId, user, 'run `true`');
        const message = await waitFor(() => discord.postedIn(channelId).find((m) => m.components.length));
        const controls = (message.components as Component[]).flatMap((row) => row.components ?? []);
        const id = (label: string) => controls.find((c) => c.label === label)!.custom_id!;
        prompts.push({ channelId, approve: id('Approve'), edit: id('Edit & approve…') });
      }
    });
    const timed = async (send: () => Promise<{ status: number }>) => {
      const start = performance.now();
      const reply = await send();
      if (reply.status !== 200) throw new Error(`interaction answered ${reply.status}`);
      return performance.now() - start;
    };
    const approve: number[] = [];
    const editDialog: number[] = [];
    for (const p of prompts) {
      editDialog.push(await timed(() => requests.click(p.channelId, user, p.edit)));
      approve.push(await timed(() => requests.click(p.channelId, user, p.approve)));
    }
    // A worker comes back: the clicks are judged and the gateway's watches on them end before it closes.
    const back = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: QUEUE,
      ...workflowCode(),
      activities: createActivities({ config, client: env.client }),
    });
    await back.runUntil(new Promise((resolve) => setTimeout(resolve, 12_000)));
    return { approve, editDialog };
  } finally {
    await gateway.close();
    await discord.stop();
  }
}

async function waitFor<T>(probe: () => T | undefined | 0): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const found = probe();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no Discord prompt within 30 s`);
}

if (require.main === module) {
  void (async () => {
    const env = await startTestTemporal();
    try {
      const { approve, editDialog } = await measureDiscordAcks(env, Number(process.env.BENCH_ROUNDS ?? 20));
      const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
      for (const [label, xs] of [
        ['Approve click, NO worker running', approve],
        ['Edit & approve… dialog, NO worker running', editDialog],
      ] as const) {
        const s = sorted(xs);
        const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(1);
        process.stdout.write(
          `Discord ${label}: n=${s.length} p50 ${at(0.5)} ms p95 ${at(0.95)} ms p99 ${at(0.99)} ms\n`,
        );
      }
    } finally {
      await env.teardown();
    }
  })();
}

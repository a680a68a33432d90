/** `agentctl` as operators run it (the real binary against a real server): list, show, stuck, resolve. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { signOperatorClaim } from '../../infra/operator-claim';
import { decideSignal, stopSignal } from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
/** The operator key the worker and agentctl share (OPERATOR_KEY; DATA_DIR/operator-key by default). */
const OPERATOR_KEY = randomBytes(32).toString('base64url');
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('agentctl for operators', () => {
  it('lists, shows and finds what is stuck on whom, then resolves it as an operator', async () => {
    await withWorker(
      env,
      async (taskQueue) => {
        const cli = async (...args: string[]) =>
          (
            await run(process.execPath, [path.join(ROOT, 'bin/agentctl.js'), ...args], {
              env: {
                ...process.env,
                TEMPORAL_ADDRESS: env.address,
                TEMPORAL_TASK_QUEUE: taskQueue,
                AGENT_CONFIG: '',
                OPERATOR_KEY,
              },
            })
          ).stdout;
        const s = new TestSession(env.client, taskQueue);
        await s.say('run `echo from-operator`', 'carol');
        const [gate] = await s.pendingGate();
        // A stranger's click is refused; an operator with namespace access may decide.
        await s.handle.signal(decideSignal, { gateId: gate!.id, choice: 'approve', userId: 'mallory' });

        let listed = '';
        for (let i = 0; i < 50 && !listed.includes(s.workflowId); i++) {
          listed = await cli('list', '--status', 'waiting_approval');
          if (!listed.includes(s.workflowId)) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(listed).toMatch(new RegExp(`${s.workflowId}\\s+waiting_approval\\s+web\\s+carol`));

        const shown = await cli('show', s.sessionId);
        expect(shown).toContain(`${s.workflowId} — waiting_approval, owner @carol`);
        expect(shown).toContain(`${gate!.id}  approval of shell_execute echo from-operator from @carol`);
        expect(shown).toContain('@carol: run `echo from-operator`');
        // What the conversation's model calls used so far (the scripted model estimates its tokens).
        expect(shown).toMatch(/\nusage: [\d,]+ tokens in 1 model call\n/);

        const stuck = await cli('stuck');
        expect(stuck).toMatch(
          new RegExp(`@carol\\s+${s.workflowId}\\s+${gate!.id}\\s+approval of shell_execute`),
        );

        const missing = await run(
          process.execPath,
          [path.join(ROOT, 'bin/agentctl.js'), 'resolve', s.workflowId, gate!.id, 'approve'],
          {
            env: { ...process.env, TEMPORAL_ADDRESS: env.address, AGENT_CONFIG: '' },
          },
        ).catch((e: { code: number; stderr: string }) => e);
        expect(missing).toMatchObject({ code: 1, stderr: expect.stringContaining('--as') });
        // Without the worker's key agentctl signs nothing (a key of its own would only be refused).
        const keyless = await run(
          process.execPath,
          [
            path.join(ROOT, 'bin/agentctl.js'),
            'resolve',
            s.workflowId,
            gate!.id,
            'approve',
            '--as',
            'olivia',
          ],
          {
            env: {
              ...process.env,
              TEMPORAL_ADDRESS: env.address,
              AGENT_CONFIG: '',
              OPERATOR_KEY: '',
              DATA_DIR: tempDir('agentctl-'),
            },
          },
        ).catch((e: { code: number; stderr: string }) => e);
        expect(keyless).toMatchObject({ code: 1, stderr: expect.stringContaining('no operator key') });
        expect(await cli('resolve', s.workflowId, gate!.id, 'approve', '--as', 'olivia')).toContain(
          'as operator:olivia',
        );
        const done = await s.idle();
        expect(done.gates[0]!.resolution).toMatchObject({ outcome: 'approved', by: 'operator:olivia' });
        expect(done.transcript.find((m) => m.role === 'tool')).toMatchObject({
          status: 'ok',
          content: expect.stringContaining('from-operator'),
        });
        expect(await cli('stuck')).not.toContain(s.workflowId);

        // Stop: refused while nothing runs; an operator stops the turn waiting on a gate.
        const idleStop = await cli('stop', s.workflowId, '--as', 'olivia').catch(
          (e: { code: number; stderr: string }) => e,
        );
        expect(idleStop).toMatchObject({ code: 1, stderr: expect.stringContaining('nothing is running') });
        await s.say('run `echo never`', 'carol');
        await s.waitFor((v) => v.gates.length === 2 && v.status === 'waiting_approval', 'a second gate');
        expect(await cli('stop', s.workflowId, '--as', 'olivia')).toContain('as operator:olivia');
        const stopped = await s.waitFor((v) => v.status === 'idle', 'the operator stop');
        expect(stopped.gates[1]!.resolution).toMatchObject({ outcome: 'stopped', by: 'operator:olivia' });
        expect(stopped.transcript.at(-1)).toMatchObject({ text: '⏹️ Stopped by @operator:olivia.' });
      },
      {},
      { OPERATOR_KEY },
    );
  });

  it('believes `operator: true` only with the operator key’s signature, never from any client of the frontend', async () => {
    const tally = new Tally();
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        await s.say('run `echo forged`', 'carol');
        const [gate] = await s.pendingGate();
        const action = { kind: 'decide' as const, target: gate!.id, choice: 'approve', operator: 'mallory' };
        const forgeries = [
          { what: 'no signature', claim: undefined },
          { what: 'another key', claim: signOperatorClaim('x'.repeat(40), action) },
          {
            what: 'a signature of another gate',
            claim: signOperatorClaim(OPERATOR_KEY, { ...action, target: 'another-gate' }),
          },
          {
            what: 'a signature of a deny',
            claim: signOperatorClaim(OPERATOR_KEY, { ...action, choice: 'deny' }),
          },
          {
            what: 'another operator’s signature',
            claim: signOperatorClaim(OPERATOR_KEY, { ...action, operator: 'olivia' }),
          },
          {
            what: 'an expired signature',
            claim: signOperatorClaim(OPERATOR_KEY, action, Date.now() - 3_600_000),
          },
        ];
        const refusals = (v: { notices: { text: string }[] }) =>
          v.notices.filter((n) => n.text.startsWith('An operator action as "mallory" was refused')).length;
        for (const [i, { what, claim }] of forgeries.entries()) {
          await s.handle.signal(decideSignal, {
            gateId: gate!.id,
            choice: 'approve',
            userId: 'mallory',
            operator: true,
            ...(claim ? { claim } : {}),
          });
          const view = await s.waitFor((v) => refusals(v) === i + 1, `the refusal of ${what}`);
          tally.attempt(
            view.gates[0]!.status === 'pending',
            () => `${what} decided the gate: ${JSON.stringify(view.gates[0]!.resolution)}`,
          );
        }
        // A forged operator stop does not stop the turn either.
        await s.handle.signal(stopSignal, { userId: 'mallory', operator: true });
        const after = await s.waitFor((v) => refusals(v) > forgeries.length, 'the forged stop refused');
        tally.attempt(
          after.status === 'waiting_approval',
          () => `a forged stop stopped the turn: ${after.status}`,
        );
        // The key's own signature, as agentctl makes it, is believed.
        await s.handle.signal(decideSignal, {
          gateId: gate!.id,
          choice: 'approve',
          userId: 'mallory',
          operator: true,
          claim: signOperatorClaim(OPERATOR_KEY, action),
        });
        const done = await s.idle();
        expect(done.gates[0]!.resolution).toMatchObject({ outcome: 'approved', by: 'operator:mallory' });

        // A signed stop is believed once: the same signal sent again (copied from history) stops nothing more.
        const stop = {
          userId: 'mallory',
          operator: true as const,
          claim: signOperatorClaim(OPERATOR_KEY, { kind: 'stop', target: s.workflowId, operator: 'mallory' }),
        };
        await s.say('run `echo second`', 'carol');
        await s.pendingGate();
        await s.handle.signal(stopSignal, stop);
        await s.waitFor((v) => v.status === 'idle', 'the signed stop believed');
        await s.say('run `echo third`', 'carol');
        await s.waitFor((v) => v.status === 'waiting_approval', 'the third turn waiting');
        await s.handle.signal(stopSignal, stop);
        const replayed = await s.waitFor(
          (v) => v.notices.some((n) => n.text.includes('its operator signature was already used once')),
          'the replayed stop refused',
        );
        tally.attempt(
          replayed.status === 'waiting_approval',
          () => `a replayed stop stopped the turn: ${replayed.status}`,
        );
      },
      {},
      { OPERATOR_KEY },
    );
    tally.finish('consent: operator: true only with the operator key');
  });
});

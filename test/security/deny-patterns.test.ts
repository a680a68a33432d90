/**
 * Security: deny patterns hold against the walk-arounds people find. Each command below tries to run what
 * `"deny": ["rm *", "curl *"]` forbids through a wrapper, an option form, a glob or a substitution in the program
 * name, or a wrapper nobody listed. The real parser and the real policy decide, under the default policy and under
 * `"policy": "auto"`; then one of them goes through a real worker as the model would send it. A row is lost when
 * the command would run without a person ("auto").
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseShellCommand } from '../../activities/tools/parse-shell';
import { decidePolicy } from '../../common/policy';
import { shellExecuteTool } from '../../common/tools/definitions';
import { Tally } from '../chaos/summary';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

const DENY = ['rm *', 'curl *'];
const WALK_AROUNDS = [
  'prlimit rm -rf x',
  'prlimit --nofile=10 rm -rf x',
  'ionice -c3 rm -rf x',
  'flock /tmp/lock rm -rf x',
  'choom -n 10 -- rm -rf x',
  'nice -n 5 rm -rf x',
  'timeout 5 rm -rf x',
  'stdbuf -oL rm -rf x',
  'setsid -f rm -rf x',
  'chrt -i 0 rm -rf x',
  'taskset -c 0 rm -rf x',
  'unshare -r rm -rf x',
  'xargs -a list rm -rf',
  'find . -exec rm -rf {} ;',
  'sh -o errexit -c "rm -rf x"',
  'bash -O extglob -c "rm -rf x"',
  'sh +o pipefail -c "rm -rf x"',
  '/???/r? -rf x',
  '[r]m -rf x',
  'r* -rf x',
  '$(printf rm) -rf x',
  '`printf rm` -rf x',
  '${X:-rm} -rf x',
  'mywrapper rm -rf x',
  'mywrapper --flag curl https://evil.example',
  'strace -f curl https://evil.example',
  // Found by the adversarial review: globs and expansions after a wrapper, env -S, command strings of wrappers,
  // shells by other names, options before -c.
  'nice /usr/bin/r[m] -rf x',
  'timeout 9 r[m] -rf x',
  'env /bin/r? -rf x',
  'nice rm${IFS}-rf${IFS}x',
  'env rm$IFS-rf x',
  "env -S'rm -rf x'",
  "env '-Srm -rf x'",
  "env --split-string='rm -rf x'",
  "env -iS'rm -rf x'",
  "script -qc ':; rm -rf x' /dev/null",
  "flock /tmp/l -c 'true; rm -rf x'",
  "watch 'true; rm -rf x'",
  "su -c 'true; rm -rf x'",
  "parallel ::: 'true; rm -rf x'",
  "rbash -c 'true; rm -rf x'",
  "ksh93 -c 'true; rm -rf x'",
  "yash -c 'true; rm -rf x'",
  "bash --rcfile /dev/null -c 'true; rm -rf x'",
  'command -p rm -rf x',
  'exec -a name rm -rf x',
  "busybox sh -c 'true; rm -rf x'",
  'nice -n5 -- rm -rf x',
];

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('deny patterns', () => {
  it('never let a walk-around run without a person, under any policy', () => {
    const tally = new Tally();
    for (const policy of [undefined, 'auto' as const])
      for (const command of WALK_AROUNDS) {
        const decision = decidePolicy({
          tool: shellExecuteTool,
          args: { command },
          shell: parseShellCommand(command),
          config: { ...(policy ? { policy } : {}), allow: ['*'], deny: DENY },
          grants: [],
          userId: 'alice',
          sessionId: 'session:web:deny',
        });
        tally.attempt(
          decision.decision !== 'auto',
          () => `${command} (policy ${policy ?? 'default'}): ${decision.decision}, ${decision.reason}`,
        );
      }
    tally.finish('deny patterns: wrappers, options, globs and unknown wrappers');
  });

  it('holds through a real worker under "policy": "auto": the wrapped rm is denied or waits for a person', async () => {
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        await s.say('run `prlimit rm -rf important`');
        const denied = await s.idle();
        expect(denied.transcript.find((m) => m.role === 'tool')).toMatchObject({
          status: 'denied',
          content: expect.stringContaining('blocked by the deny pattern "rm *"'),
        });
        await s.say('run `[r]m -rf important`');
        const [gate] = await s.pendingGate();
        expect(gate!.subject).toBe('[r]m -rf important');
      },
      { tools: { shell_execute: { policy: 'auto', deny: DENY } } },
    );
  });
});

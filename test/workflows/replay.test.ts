/** Replays recorded histories with today's workflow code: a non-deterministic change fails here, not in production. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { workflowCode } from '../../workers/workflow-code';
import { userWorkflowId } from '../../common/ids';

const DIR = path.resolve(__dirname, '../histories');

/**
 * The id the workflow ran under, where its code depends on it: a person's directory is `user:<their id>` (it refuses
 * to run under another). Other histories replay under their file's name.
 */
function workflowIdOf(history: ReturnType<typeof historyFromJSON>, file: string): string {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (started?.workflowType?.name !== 'userDirectoryWorkflow') return file;
  const [input] = started.input?.payloads ?? [];
  const { userId } = JSON.parse(Buffer.from(input!.data!).toString('utf8')) as { userId: string };
  return userWorkflowId(userId);
}
const files = readdirSync(DIR).filter((file) => file.endsWith('.json'));

describe('recorded workflow histories', () => {
  it('has histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(12);
  });

  it.each(files)('replays %s without non-determinism', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(path.join(DIR, file), 'utf8')));
    await Worker.runReplayHistory(
      workflowCode(inject('workflowBundlePath')),
      history,
      workflowIdOf(history, file),
    );
  });

  // Why workers bundle no workflow interceptors (workers/workflow-code.ts): the SDK's OpenTelemetry ones
  // reorder timer cancellations, so existing sessions would fail to replay. When this starts passing, an
  // SDK upgrade has fixed it and workflow spans can be turned on.
  it('would break running sessions with the OpenTelemetry workflow interceptors, so they stay out', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.resolve(__dirname, '../../workflows'),
      workflowInterceptorModules: [
        require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
      ],
      logger: new DefaultLogger('WARN'),
    });
    const history = historyFromJSON(
      JSON.parse(readFileSync(path.join(DIR, 'approve-then-answer.json'), 'utf8')),
    );
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { code }, sinks: { exporter: { export: { fn: () => {} } } } },
        history,
      ),
    ).rejects.toThrow(/Nondeterminism/);
  });
});

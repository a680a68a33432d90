/** Replays recorded histories with today's workflow code: a non-deterministic change fails here, not in production. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { workflowCode } from '../../workers/workflow-code';

const DIR = path.resolve(__dirname, '../histories');
const files = readdirSync(DIR).filter((file) => file.endsWith('.json'));

describe('recorded workflow histories', () => {
  it('has histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(12);
  });

  it.each(files)('replays %s without non-determinism', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(path.join(DIR, file), 'utf8')));
    await Worker.runReplayHistory(workflowCode(inject('workflowBundlePath')), history, file);
  });
});

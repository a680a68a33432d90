/** A webhook-cadence mission end to end: created through the web chat, triggered over HTTP with its own secret. */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missionWorkflowId } from '../../common/missions/types';
import { missionViewQuery } from '../../workflows/missions/contract';
import { stateQuery } from '../../workflows/session/contract';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let stack: Stack;
beforeAll(async () => {
  env = await startTestTemporal();
  stack = await startStack({ temporalAddress: env.address });
});
afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

describe('mission webhooks', () => {
  it('starts a run with the body as context for the right secret only, and posts the result', async () => {
    const sessionId = 'missions-webhook';
    await stack.web.say(
      sessionId,
      'call mission_create {"name": "deploy watch", "goal": "what time is it", "cadence": "webhook"}',
    );
    const created = await stack.web.waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
      'the mission created',
    );
    const content = (created.transcript.find((m) => m.role === 'tool') as { content: string }).content;
    const id = /\(id ([0-9a-f-]{36})\)/.exec(content)![1]!;
    expect(content).toContain(`/hooks/missions/${id}`);
    expect(content).not.toMatch(/secret: \S{20,}/); // the secret never reaches the transcript

    const mine = await stack.web.request('GET', `/missions/${id}/webhook`);
    expect(mine.status).toBe(200);
    expect(await stack.web.request('GET', `/missions/${id}/webhook`, undefined, 'bob')).toMatchObject({
      status: 404,
    });

    const hook = (secret: string, body: string) =>
      fetch(`${stack.web.baseUrl}/hooks/missions/${id}`, {
        method: 'POST',
        headers: { 'x-mission-secret': secret, 'content-type': 'text/plain' },
        body,
      });
    expect((await hook('wrong', 'x')).status).toBe(401);
    expect((await hook(mine.body.secret, 'x'.repeat(5_000))).status).toBe(413);
    const handle = env.client.workflow.getHandle(missionWorkflowId(id));
    expect((await handle.query(missionViewQuery)).runs).toHaveLength(0);

    expect((await hook(mine.body.secret, 'release 4.2 deployed to production')).status).toBe(202);
    await stack.web.waitFor(
      sessionId,
      (v) =>
        v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('**deploy watch** (run 1)')),
      'the result posted',
    );
    const run = (await handle.query(missionViewQuery)).runs[0]!;
    expect(run.trigger).toBe('webhook');
    const runView = await env.client.workflow.getHandle(run.workflowId).query(stateQuery);
    expect(JSON.stringify(runView.transcript)).toContain('release 4.2 deployed to production');
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).not.toContain(mine.body.secret);
  });
});

/**
 * Registering the search attributes on a server that does not know the namespace yet (a fresh server right after
 * its namespace job): the worker and the gateway wait for it with backoff instead of giving up on the first refusal.
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customSearchAttributes } from '../../common/search-attributes';
import { registerSearchAttributesPatiently } from '../../infra/temporal/search-attributes';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('search attribute registration', () => {
  it('waits for a namespace made after it started, then registers every attribute', async () => {
    const connection = env.client.connection as Connection;
    const namespace = `fresh-${randomUUID().slice(0, 8)}`;
    const said: string[] = [];
    const registering = registerSearchAttributesPatiently(connection, namespace, (m) => said.push(m), {
      totalMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    await registering;
    const listed =
      (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
    expect(
      customSearchAttributes.map((key) => key.name).filter((name) => !Object.hasOwn(listed, name)),
    ).toEqual([]);
    expect(said[0]).toMatch(new RegExp(`namespace ${namespace} is not ready yet`));
  });

  it('gives up with the server’s own error when the namespace never appears', async () => {
    const connection = env.client.connection as Connection;
    await expect(
      registerSearchAttributesPatiently(connection, `never-${randomUUID().slice(0, 8)}`, () => {}, {
        totalMs: 1_500,
      }),
    ).rejects.toThrow(/not found|Namespace/i);
  });
});

/** Connecting and registering search attributes against a real server that starts without them. */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalCli } from '../../infra/temporal/cli';
import { connectClient } from '../../infra/temporal/connect';
import { registerSearchAttributes } from '../../infra/temporal/search-attributes';
import { freePort } from '../helpers/processes';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI_PATH);
  env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: cli ? { type: 'existing-path', path: cli } : { type: 'cached-download' },
      log: { format: 'pretty', level: 'error' },
      // A namespace where an attribute was registered with the wrong type (by hand, or by an older release).
      namespace: 'default',
      extraArgs: ['--namespace', 'mistyped'],
    },
  });
});
afterAll(async () => {
  await env?.teardown();
});

describe('Temporal connection', () => {
  it('registers the missing search attributes once, and is a no-op the second time', async () => {
    const connection = env.connection as unknown as Connection;
    const messages: string[] = [];
    await registerSearchAttributes(connection, 'default', (m) => messages.push(m));
    await registerSearchAttributes(connection, 'default', (m) => messages.push(m));
    expect(messages).toEqual([
      'registered search attributes: AgentStatus, AgentChannel, AgentOwner, AgentCredentialWaits, AgentDeciders, AgentMissionName, AgentMissionStatus, AgentSharedMission, AgentTokens, AgentCostUsd, AgentFeedback, AgentForkedFrom',
    ]);
    const listed = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(listed.customAttributes ?? {})).toEqual(
      expect.arrayContaining([
        'AgentStatus',
        'AgentChannel',
        'AgentOwner',
        'AgentCredentialWaits',
        'AgentMissionStatus',
        'AgentTokens',
        'AgentCostUsd',
      ]),
    );
    // A list of keywords, so one run can wait on several credentials.
    expect(listed.customAttributes!.AgentCredentialWaits).toBe(
      temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
    );
    // Numbers, so operators can compare them (`AgentCostUsd > 1`); a Keyword would refuse the upsert.
    expect(listed.customAttributes!.AgentTokens).toBe(
      temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
    );
    expect(listed.customAttributes!.AgentCostUsd).toBe(
      temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
    );
    expect(listed.customAttributes!.AgentStatus).toBe(
      temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    );
  });

  it('says which attribute has the wrong type and how to fix it, after registering the rest', async () => {
    const connection = env.connection as unknown as Connection;
    const { IndexedValueType } = temporal.api.enums.v1;
    await connection.operatorService.addSearchAttributes({
      namespace: 'mistyped',
      searchAttributes: { AgentTokens: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD },
    });
    await expect(registerSearchAttributes(connection, 'mistyped', () => {})).rejects.toThrow(
      'search attribute AgentTokens is registered as INDEXED_VALUE_TYPE_KEYWORD, the workflows need INDEXED_VALUE_TYPE_INT: remove it (temporal operator search-attribute remove --name AgentTokens) and start again',
    );
    const listed = await connection.operatorService.listSearchAttributes({ namespace: 'mistyped' });
    expect(listed.customAttributes!.AgentCostUsd).toBe(IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE);
  });

  it('says what to do when the server cannot be reached', async () => {
    const port = await freePort();
    await expect(connectClient(`127.0.0.1:${port}`, 'default')).rejects.toThrow(
      new RegExp(
        `Cannot reach the Temporal server at 127.0.0.1:${port} .*unset TEMPORAL_ADDRESS to use the embedded dev server`,
      ),
    );
  });
});

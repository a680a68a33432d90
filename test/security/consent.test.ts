/**
 * Consent among several people: a shared mission's run never acts with the credential of whoever signs in next.
 * Bob's shared mission waits for an Acme sign-in; Carol connects Acme for her own reasons (her Credentials panel,
 * a real OAuth round trip through the gateway), then forges the resume signal straight at the run. Neither reaches
 * Bob's run; Bob's own sign-in does. Real worker, gateway, Temporal server and OAuth provider; every attempt is a
 * scoreboard run, and one that gets through is counted as lost.
 */
import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { credentialProvidedSignal, type Gate, type SessionView } from '../../workflows/session/contract';
import { Tally } from '../chaos/summary';
import { Browser, CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let provider: TestOAuthProvider;
let stack: Stack;
const tally = new Tally();

beforeAll(async () => {
  env = await startTestTemporal();
  provider = await new TestOAuthProvider().start();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      allowHosts: [new URL(provider.apiUrl).host],
      providers: {
        acme: {
          type: 'oauth2',
          displayName: 'Acme Files',
          issuer: provider.issuer,
          scopes: ['files.read'],
          apiHosts: [new URL(provider.apiUrl).host],
        },
      },
    },
    env: {
      OAUTH_ACME_CLIENT_ID: CLIENT_ID,
      OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
      VAULT_KEY: randomBytes(32).toString('base64'),
    },
  });
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('consent: a shared mission never uses another person’s sign-in');
  } finally {
    await stack?.stop();
    await provider?.stop();
    await env?.teardown();
  }
});

const pendingRunCredential = (v: SessionView) =>
  v.gates.find((g) => g.remote && g.kind === 'credential' && g.status === 'pending') as
    (Gate & { connectUrl?: string }) | undefined;

describe('consent among several people', () => {
  it('keeps a shared mission waiting for its owner’s sign-in, whoever else connects the provider', async () => {
    const bobs = `consent-${randomBytes(4).toString('hex')}`;
    const goal = `fetch ${provider.apiUrl}/files with acme`;
    await stack.web.say(
      bobs,
      `call mission_create {"name": "team files", "goal": "${goal}", "cadence": "manual", "shared": true}`,
      'bob',
    );
    await stack.web.answered(bobs, 'bob');
    await stack.web.say(bobs, 'call mission_fire "team files"', 'bob');
    const waiting = await stack.web.waitFor(
      bobs,
      (v) => !!pendingRunCredential(v),
      'the run’s sign-in',
      60_000,
      'bob',
    );
    const gate = pendingRunCredential(waiting)!;

    // Carol connects Acme from her Credentials panel: a complete OAuth sign-in of her own.
    const panel = await stack.web.request('GET', '/credentials', undefined, 'carol');
    const acme = (panel.body as { providers: { name: string; connectUrl: string }[] }).providers.find(
      (p) => p.name === 'acme',
    )!;
    const carolSignedIn = await new Browser(stack.web.headers('carol')).signIn(acme.connectUrl);
    tally.check(carolSignedIn.status === 200, () => `carol's own sign-in failed: ${carolSignedIn.status}`);
    // She forges the resume straight at the run (anyone who reaches the frontend could).
    await env.client.workflow
      .getHandle(gate.remote!.workflowId)
      .signal(credentialProvidedSignal, { provider: 'acme', userId: 'carol' });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await stack.web.request('GET', `/sessions/${bobs}`, undefined, 'bob');
    const still = pendingRunCredential(after.body as SessionView);
    tally.attempt(
      still?.id === gate.id,
      () => `carol's sign-in resumed bob's run: ${JSON.stringify(after.body).slice(0, 800)}`,
    );
    tally.attempt(
      !JSON.stringify(after.body).includes('your files'),
      () => 'data read with carol’s credential reached bob’s conversation',
    );

    // Bob's own sign-in, from his prompt, resumes the run with his account.
    const bobSignedIn = await new Browser(stack.web.headers('bob')).signIn(still!.connectUrl!);
    tally.check(bobSignedIn.status === 200, () => `bob's sign-in failed: ${bobSignedIn.status}`);
    const done = await stack.web.waitFor(
      bobs,
      (v) => v.transcript.some((m) => m.role === 'assistant' && m.text.includes('**team files** (run 1)')),
      'the run’s result',
      60_000,
      'bob',
    );
    const resolved = done.gates.find((g) => g.id === gate.id);
    tally.check(
      resolved?.resolution?.by === 'bob',
      () => `the run's sign-in was resolved by ${resolved?.resolution?.by}, not bob`,
    );
  });
});

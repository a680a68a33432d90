/**
 * The client under test of `npm run mcp:conformance` (@modelcontextprotocol/conformance): the suite starts a server
 * for a scenario and runs this with the server's URL as the last argument (MCP_CONFORMANCE_SCENARIO names the
 * scenario, MCP_CONFORMANCE_CONTEXT carries what it hands a client, such as a pre-registered client).
 *
 * It drives the runtime's own MCP code, not a second client: the worker's McpPool (connect, list, call, a server's
 * questions across rounds, a refused token renewed) and the credential service the gateway signs people in with (MCP
 * authorization discovery, dynamic or pre-registered clients, PKCE, the token exchange, refresh). Only the person is
 * played here: a sign-in follows the authorization server's redirect as a browser does and hands the callback URL to
 * the same code the gateway's callback runs; a server's question is answered as a person who accepts what it proposes
 * (the runtime fills in its defaults).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpPool } from '../activities/mcp/pool';
import { MCP_SEPARATOR } from '../common/tools/mcp';
import { elicitContent, elicitFields, type ElicitAsk, type ElicitReply } from '../common/tools/elicitation';
import { loadConfig } from '../infra/config';
import { mcpProviderName } from '../infra/credentials/providers';
import { OAuthClient } from '../infra/credentials/oauth';
import { CredentialService } from '../infra/credentials/service';
import { signState } from '../infra/credentials/signed';

const SERVER = 'conformance';
const PERSON = 'conformance-person';
/** The gateway's address as the runtime would register it; nothing listens: the redirect is read, not followed. */
const PUBLIC_URL = 'http://127.0.0.1:9';
/** A scenario may ask several times (a step-up, a question per round): this many, then the script gives up. */
const MAX_ROUNDS = 6;

async function main(): Promise<void> {
  const url = process.argv.at(-1);
  if (!url || !/^https?:\/\//.test(url)) throw new Error('usage: mcp-conformance-client <server url>');
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, unknown>;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mcp-conformance-'));
  const policyFile = path.join(dataDir, 'agent.config.json');
  writeFileSync(policyFile, JSON.stringify({ mcpServers: { [SERVER]: { url } } }));
  const provider = mcpProviderName(SERVER);
  const envName = provider.toUpperCase().replace(/-/g, '_');
  const config = loadConfig({
    DATA_DIR: dataDir,
    AGENT_CONFIG: policyFile,
    MODEL_PROVIDER: 'scripted',
    PUBLIC_URL,
    VAULT_KEY: randomBytes(32).toString('base64'),
    GATEWAY_KEY: randomBytes(32).toString('base64'),
    // A client the scenario registered in advance, as an operator would configure one.
    ...(typeof context.client_id === 'string' ? { [`OAUTH_${envName}_CLIENT_ID`]: context.client_id } : {}),
    ...(typeof context.client_secret === 'string'
      ? { [`OAUTH_${envName}_CLIENT_SECRET`]: context.client_secret }
      : {}),
  });
  const credentials = CredentialService.fromConfig(config);
  const pool = new McpPool(config.policy.mcpServers, () => credentials, {
    log: (message, fields) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`),
  });
  const log = (line: string) => process.stdout.write(`${line}\n`);

  /** The person signs in: the runtime's authorization URL, the server's redirect, the runtime's code exchange. */
  const signIn = async () => {
    const client = credentials.client(provider);
    if (!client) throw new Error(`no OAuth provider ${provider}`);
    const verifier = OAuthClient.newVerifier();
    const state = signState(
      credentials.keys.signing,
      randomBytes(16).toString('base64url'),
      Date.now() + 600_000,
    );
    const redirectUri = `${PUBLIC_URL}/oauth/${provider}/callback`;
    // As the gateway's sign-in does: scopes a tool server asked for beyond the current sign-in's (step-up) too.
    const wanted = (await credentials.vault.get(PERSON, provider))?.wantScope;
    const authorize = await client.authorizationUrl({
      redirectUri,
      state,
      verifier,
      ...(wanted ? { scopes: wanted.split(' ') } : {}),
    });
    const answer = await fetch(authorize, { redirect: 'manual' });
    const location = answer.headers.get('location');
    if (!location?.startsWith(redirectUri))
      throw new Error(
        `the authorization server answered ${answer.status} without a redirect to the callback`,
      );
    const tokens = await client.exchange(new URL(location), { verifier, state });
    await credentials.storeTokens(PERSON, provider, tokens);
    log(`signed in to ${provider}`);
  };

  const controller = new AbortController();
  const tools = async () => {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const found = await pool.discover(PERSON);
      if (found.errors.length) throw new Error(found.errors.map((e) => e.message).join('; '));
      const named = found.tools.filter((t) => t.server === SERVER);
      if (!named.some((t) => t.tool === 'connect')) return named;
      const gate = await pool.precheck(SERVER, 'connect', PERSON);
      if (gate?.status !== 'credential_required') return named.filter((t) => t.tool !== 'connect');
      await signIn();
    }
    throw new Error('still asked to sign in after several sign-ins');
  };

  const listed = await tools();
  log(`tools: ${listed.map((t) => t.tool).join(', ') || '(none)'}`);
  for (const tool of listed) {
    const args = argumentsFor(scenario, tool.tool);
    const inputs: ElicitReply[] = [];
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const result = await pool.call(SERVER, tool.tool, args, PERSON, controller.signal, inputs);
      if (result.status === 'credential_required') {
        await signIn();
        continue;
      }
      if (result.status === 'input_required' && result.input) {
        inputs.push(accept(result.input));
        continue;
      }
      log(`${SERVER}${MCP_SEPARATOR}${tool.tool}: ${result.status}: ${result.content.slice(0, 200)}`);
      break;
    }
  }
  await credentials.close();
}

/** What the scenario's tools take: the numbers add_numbers adds; nothing for the others. */
function argumentsFor(scenario: string, tool: string): Record<string, unknown> {
  if (tool === 'add_numbers') return { a: 2, b: 3 };
  void scenario;
  return {};
}

/** The person accepts a server's form as proposed: the runtime's own answer-to-content, with nothing typed. */
function accept(ask: ElicitAsk): ElicitReply {
  if (ask.mode !== 'form') return { digest: ask.digest, action: 'accept' };
  const fields = elicitFields(ask);
  if ('error' in fields) return { digest: ask.digest, action: 'decline' };
  const content = elicitContent(fields, []);
  return content.ok
    ? { digest: ask.digest, action: 'accept', content: content.content }
    : { digest: ask.digest, action: 'decline' };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);

/**
 * Security: `"network": "full"` reaches the public internet only. An approved command tries the control plane as
 * an attacker would: a real Temporal frontend (gRPC, to list workflows and signal gates), a local service standing
 * in for the gateway, the cloud metadata address, by address, by name, through the proxy and around it. Each try is
 * a scoreboard row; one that reaches its target is lost. The same commands with the target in "allowHosts" do
 * reach it: the rows can fail. Real bwrap, a real Temporal dev server, real curl.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellExecuteTool } from '../../common/tools/definitions';
import { loadConfig } from '../../infra/config';
import { executors } from '../../activities/tools/registry';
import type { ShellSandbox } from '../../activities/tools/sandbox';
import { EGRESS_SOCKET_NAME } from '../../activities/tools/egress-proxy';
import { probeSandbox } from '../../activities/tools/sandbox-probe';
import type { ToolRunResult } from '../../activities/types';
import { Tally } from '../chaos/summary';
import { tempDir } from '../helpers/config';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let listener: Server;
let listenerPort: number;
let connections = 0;
const greeting = `gateway-${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  env = await startTestTemporal();
  listener = createServer((socket) => {
    connections++;
    socket.end(`${greeting}\n`);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerPort = (listener.address() as { port: number }).port;
});

afterAll(async () => {
  listener?.close();
  await env?.teardown();
});

const temporalPort = () => Number(env.address.split(':').at(-1));

/** shell_execute as the worker runs it, under a policy file with "network": "full" and these allowHosts. */
async function shell(command: string, allowHosts: string[] = []): Promise<ToolRunResult> {
  const file = path.join(tempDir(), 'agent.config.json');
  writeFileSync(file, JSON.stringify({ allowHosts, tools: { shell_execute: { network: 'full' } } }));
  const config = loadConfig({ DATA_DIR: tempDir(), AGENT_CONFIG: file });
  const sandbox: ShellSandbox = {
    status: await probeSandbox(config.policy.sandbox),
    network: config.policy.tools[shellExecuteTool.name]!.network!,
    egress: { allowHosts: config.policy.allowHosts, denyHosts: config.policy.denyHosts },
  };
  return await executors[shellExecuteTool.name]!(
    { command, timeout_seconds: 30 },
    {
      dataDir: config.dataDir,
      sessionId: `session:web:egress-${randomBytes(3).toString('hex')}`,
      signal: new AbortController().signal,
      shell: sandbox,
    },
  );
}

/** A gRPC call to Temporal's frontend (GetSystemInfo, an empty request) through the proxy's tunnel, as curl makes it. */
const grpc = (host: string, port: number, extra = '') =>
  `printf '\\000\\000\\000\\000\\000' | curl -s --max-time 8 ${extra} --http2-prior-knowledge -X POST ` +
  `-H 'content-type: application/grpc' -H 'te: trailers' --data-binary @- ` +
  `-o /dev/null -w 'grpc=%{http_code} %header{grpc-status}' ` +
  `http://${host}:${port}/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo; echo`;
const reachedTemporal = (result: ToolRunResult) => /grpc=200 0\b/.test(result.content);

describe('"network": "full" never reaches the control plane', () => {
  it('reaches Temporal and a local service when "allowHosts" lists them: the proxy works', async () => {
    const temporal = await shell(grpc('127.0.0.1', temporalPort(), '-p'), [`127.0.0.1:${temporalPort()}`]);
    expect(reachedTemporal(temporal), temporal.content).toBe(true);
    const before = connections;
    const local = await shell(`curl -s --max-time 5 -p telnet://127.0.0.1:${listenerPort} </dev/null`, [
      `127.0.0.1:${listenerPort}`,
    ]);
    expect(local.content).toContain(greeting);
    expect(connections).toBe(before + 1);
  });

  it('reaches an HTTPS port given by its default (CONNECT host:443), as every https:// URL does', async () => {
    // Port 443 itself, as curl https://… asks for it (needs root to listen there, as the CI runs).
    const https = createServer((socket) => socket.end(`${greeting}-443\n`));
    await new Promise<void>((resolve, reject) => {
      https.once('error', reject);
      https.listen(443, '127.0.0.1', resolve);
    });
    try {
      const result = await shell(`curl -s --max-time 5 -p telnet://127.0.0.1:443 </dev/null`, [
        '127.0.0.1:443',
      ]);
      expect(result.content).toContain(`${greeting}-443`);
    } finally {
      https.close();
    }
  });

  it('refuses Temporal’s frontend, the gateway and the metadata service every way an approved command tries', async () => {
    const tally = new Tally();
    const t = temporalPort();
    const temporalTries = [
      grpc('127.0.0.1', t, '-p'),
      grpc('localhost', t, '-p'),
      grpc('[::ffff:127.0.0.1]', t, '-p'),
      grpc('0.0.0.0', t, '-p'),
      grpc('127.1', t, '-p'),
      grpc('2130706433', t, '-p'),
      grpc('127.0.0.1', t, "--noproxy '*'"),
      grpc('localhost', t),
    ];
    for (const command of temporalTries) {
      const result = await shell(command);
      tally.attempt(!reachedTemporal(result), () => `${command} reached Temporal: ${result.content}`);
    }
    const l = listenerPort;
    const gatewayTries = [
      `curl -s --max-time 5 -p telnet://127.0.0.1:${l} </dev/null`,
      `curl -s --max-time 5 -p telnet://localhost:${l} </dev/null`,
      `curl -s --max-time 5 http://127.0.0.1:${l}/`,
      `curl -s --max-time 5 --noproxy '*' http://127.0.0.1:${l}/`,
      `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${l}; head -n1 <&3'`,
      `printf 'CONNECT 127.0.0.1:${l} HTTP/1.1\\r\\n\\r\\n' | curl -s --max-time 5 telnet://127.0.0.1:3128`,
      `python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:${l}/', timeout=5).read())"`,
      `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new("127.0.0.1:${l}") or die "refused: $!\\n"; print <$s>'`,
    ];
    for (const command of gatewayTries) {
      const before = connections;
      const result = await shell(command);
      const reached = connections > before || result.content.includes(greeting);
      tally.attempt(!reached, () => `${command} reached the local service: ${result.content}`);
    }
    const metadata = await shell('curl -s --max-time 5 http://169.254.169.254/latest/meta-data/');
    tally.attempt(
      metadata.content.includes("refused by the sandbox's network policy"),
      () => `the metadata address was not refused: ${metadata.content}`,
    );
    tally.finish('sandbox: network full never reaches the control plane');
  });

  it('keeps a running command’s egress proxy from every other local account', async () => {
    const tally = new Tally();
    const before = new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('egress-')));
    // The approved command keeps its proxy open while another account on the host looks for it.
    const running = shell('sleep 4; echo done');
    let dir: string | undefined;
    for (let i = 0; i < 100 && !dir; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      dir = readdirSync(tmpdir()).find((name) => name.startsWith('egress-') && !before.has(name));
    }
    expect(dir, 'the command’s proxy directory').toBeDefined();
    const socket = path.join(tmpdir(), dir!, EGRESS_SOCKET_NAME);
    const owner = statSync(socket).uid;
    // nobody (65534) stands for any other account: not the worker, not the command's own uid.
    const other = spawnSync(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        'curl',
        '-s',
        '--max-time',
        '3',
        '--unix-socket',
        socket,
        'http://example.com/',
      ],
      { encoding: 'utf8' },
    );
    tally.attempt(
      other.status !== 0 && !other.stdout.includes('HTTP'),
      () => `another account used the proxy: ${other.stdout}`,
    );
    tally.attempt(
      (statSync(socket).mode & 0o077) === 0,
      () => `the socket is mode ${(statSync(socket).mode & 0o777).toString(8)}`,
    );
    tally.attempt(
      (statSync(path.dirname(socket)).mode & 0o077) === 0,
      () => `the directory is mode ${(statSync(path.dirname(socket)).mode & 0o777).toString(8)}`,
    );
    // The command's own uid owns them (the worker's when it does not run as root).
    expect(owner).not.toBe(65534);
    expect((await running).content).toContain('done');
    tally.finish('sandbox: another local account uses a command’s egress proxy');
  });
});

/**
 * Security: http_request against real local listeners. Every way of naming a private, loopback, link-local
 * or metadata address is refused before anything is sent (the listeners record that no request arrived),
 * redirects are checked hop by hop, a DNS answer that changes after the check never wins, a provider's
 * token reaches only its apiHosts, and a huge response costs no more than the cap. Each attack family is
 * a row on the security scoreboard; "lost" counts requests that reached a listener they must not reach.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { authorizeTool } from '../../activities/tool-credentials';
import { vetDestination, type AddressPolicy, type Resolve } from '../../activities/tools/address-policy';
import { runHttpRequest, type HttpCredential } from '../../activities/tools/http';
import { OUTPUT_CAP } from '../../activities/tools/output-cap';
import { executors } from '../../activities/tools/registry';
import { resolveProviders } from '../../infra/credentials/providers';
import { CredentialService } from '../../infra/credentials/service';
import { Tally } from '../chaos/summary';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen[]) => void;

const hello: Handler = (_req, res) => res.end('hello from a listener');
const servers: http.Server[] = [];

/** A real HTTP server that records every request it gets (method, path, headers, body). */
async function listen(handler: Handler = hello, host = '127.0.0.1', port = 0) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      handler(req, res, seen);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  servers.push(server);
  const bound = (server.address() as AddressInfo).port;
  return {
    seen,
    port: bound,
    origin: host.includes(':') ? `http://[${host}]:${bound}` : `http://${host}:${bound}`,
  };
}

const redirectTo =
  (location: (req: IncomingMessage) => string, status = 302): Handler =>
  (req, res) => {
    res.writeHead(status, { location: location(req) });
    res.end();
  };

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const strict: AddressPolicy = { allowHosts: [], denyHosts: [] };
const get = (url: string, policy = strict, resolve?: Resolve) =>
  runHttpRequest({ method: 'GET', url, policy, ...(resolve ? { resolve } : {}) });
const refused = (result: { status: string; content: string }) =>
  result.status === 'error' && result.content.startsWith('refused');
/** DNS for names of our choosing; counts the lookups. */
function fakeDns(answers: Record<string, string[][]>) {
  const calls: string[] = [];
  const resolve: Resolve = async (name) => {
    const asked = calls.filter((n) => n === name).length;
    calls.push(name);
    const list = answers[name];
    if (!list) throw new Error(`ENOTFOUND ${name}`);
    return list[Math.min(asked, list.length - 1)]!;
  };
  return { resolve, calls };
}

describe('http_request address policy', () => {
  it('refuses loopback, private and metadata addresses in every spelling, and sends nothing', async () => {
    const tally = new Tally();
    const gateway = await listen();
    const metadata = await listen((_req, res) => res.end('{"AccessKeyId":"ASIA-secret"}'));
    const loopback6 = await listen(hello, '::1');
    const port = gateway.port;
    const attempts = [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://LOCALHOST.:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://0x7f000001:${port}/`,
      `http://017700000001:${port}/`,
      `http://127.1:${port}/`,
      `http://127.0.0.1.:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://0:${port}/`,
      `http://[::]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
      `http://[64:ff9b::127.0.0.1]:${port}/`,
      `http://[2002:7f00:1::1]:${port}/`,
      `http://[::127.0.0.1]:${port}/`,
      `http://user:pass@127.0.0.1:${port}/`,
      `http://127.0.0.1:${metadata.port}/latest/meta-data/iam/security-credentials/`,
      `${loopback6.origin}/`,
      `http://[0:0:0:0:0:0:0:1]:${loopback6.port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://10.0.0.1/',
      'http://172.16.5.4/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://100.100.100.200/latest/meta-data/',
      'http://192.0.2.1/',
      'http://198.18.0.1/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://240.0.0.1/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[ff02::1]/',
      'http://[2001:db8::1]/',
      'http://[64:ff9b::a00:1]/',
    ];
    for (const url of attempts) {
      const result = await get(url);
      tally.check(refused(result), () => `${url}: ${result.status} ${result.content.slice(0, 200)}`);
    }
    // A name whose DNS answer is loopback, alone or beside a public address.
    const dns = fakeDns({ 'intranet.test': [['127.0.0.1']], 'mixed.test': [['93.184.215.14', '127.0.0.1']] });
    for (const url of [`http://intranet.test:${port}/`, `http://mixed.test:${port}/`]) {
      const result = await get(url, strict, dns.resolve);
      tally.check(refused(result), () => `${url}: ${result.content.slice(0, 200)}`);
    }
    tally.lost = gateway.seen.length + metadata.seen.length + loopback6.seen.length;
    tally.check(tally.lost === 0, () => `requests arrived: ${tally.lost}`);
    tally.finish('ssrf: private addresses');
  });

  it('says why and how to allow it, and allowHosts opens exactly what it names (denyHosts wins)', async () => {
    const open = await listen();
    const closed = await listen();
    const why = await get(`http://127.0.0.1:${closed.port}/`);
    expect(why.content).toContain('127.0.0.1 is not public (loopback)');
    expect(why.content).toContain(
      `"allowHosts" in the policy file lists the host (e.g. "127.0.0.1:${closed.port}")`,
    );

    const policy = { allowHosts: [`127.0.0.1:${open.port}`], denyHosts: [] };
    const allowed = await get(`${open.origin}/path?q=1`, policy);
    expect(allowed).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('hello from a listener'),
    });
    expect(open.seen).toMatchObject([{ method: 'GET', url: '/path?q=1' }]);
    expect(refused(await get(`${closed.origin}/`, policy))).toBe(true);

    const byName = fakeDns({ 'intranet.test': [['127.0.0.1']] });
    const named = await get(
      `http://intranet.test:${open.port}/`,
      { allowHosts: ['intranet.test'], denyHosts: [] },
      byName.resolve,
    );
    expect(named.status).toBe('ok');
    const denied = await get(`${open.origin}/`, {
      allowHosts: ['127.0.0.0/8'],
      denyHosts: [`127.0.0.1:${open.port}`],
    });
    expect(denied.content).toContain('is in "denyHosts"');
    // A wide CIDR does not open the metadata address; only its exact address does.
    expect(
      (
        await vetDestination(new URL('http://169.254.169.254/'), {
          allowHosts: ['169.254.0.0/16'],
          denyHosts: [],
        })
      ).ok,
    ).toBe(false);
    expect(open.seen).toHaveLength(2);
    expect(closed.seen).toHaveLength(0);
  });

  it('reads allowHosts entries as documented: ports, brackets, CIDRs and subdomain wildcards', async () => {
    const dns = fakeDns({ 'a.corp.test': [['10.0.0.5']], 'corp.test': [['10.0.0.6']] });
    const vet = async (url: string, allowHosts: string[]) =>
      (await vetDestination(new URL(url), { allowHosts, denyHosts: [] }, dns.resolve)).ok;
    expect(await vet('http://[::1]:8080/', ['[::1]:8080'])).toBe(true);
    expect(await vet('http://[::1]:8081/', ['[::1]:8080'])).toBe(false);
    expect(await vet('http://[fd12::1]/', ['fd00::/8'])).toBe(true);
    expect(await vet('http://[fd00:ec2::254]/', ['fd00::/8'])).toBe(false);
    expect(await vet('http://[fd00:ec2::254]/', ['fd00:ec2::254'])).toBe(true);
    expect(await vet('http://a.corp.test/', ['*.corp.test'])).toBe(true);
    expect(await vet('http://corp.test/', ['*.corp.test'])).toBe(false);
    expect(await vet('https://a.corp.test/', ['a.corp.test:80'])).toBe(false);
    expect(await vet('http://10.1.2.3/', ['10.0.0.0/8'])).toBe(true);
    expect(await vet('http://[::ffff:10.1.2.3]/', ['10.0.0.0/8'])).toBe(true);
  });

  it('lets public addresses through, also in their IPv6 forms', async () => {
    for (const url of [
      'http://8.8.8.8/',
      'http://[2606:4700:4700::1111]/',
      'http://[::ffff:8.8.8.8]/',
      'http://[64:ff9b::808:808]/',
      'https://api.github.com/',
    ]) {
      const dns = fakeDns({ 'api.github.com': [['140.82.121.6']] });
      expect(await vetDestination(new URL(url), strict, dns.resolve), url).toMatchObject({ ok: true });
    }
  });
});

describe('http_request redirects', () => {
  it('checks every hop: an allowed host cannot redirect to a private one', async () => {
    const tally = new Tally();
    const inside = await listen();
    const targets = [
      `http://127.0.0.1:${inside.port}/admin`,
      `http://localhost:${inside.port}/admin`,
      `http://2130706433:${inside.port}/admin`,
      `http://[::ffff:127.0.0.1]:${inside.port}/admin`,
      `http://0.0.0.0:${inside.port}/admin`,
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/',
      'file:///etc/passwd',
    ];
    for (const [i, target] of targets.entries()) {
      for (const status of [301, 302, 303, 307, 308]) {
        const front = await listen(redirectTo(() => target, status));
        const policy = { allowHosts: [`127.0.0.1:${front.port}`], denyHosts: [] };
        const result = await runHttpRequest({
          method: i % 2 ? 'POST' : 'GET',
          url: `${front.origin}/`,
          body: 'x',
          policy,
        });
        tally.check(
          refused(result) && front.seen.length === 1,
          () => `${status} to ${target}: ${result.content.slice(0, 200)}`,
        );
      }
    }
    tally.lost = inside.seen.length;
    tally.finish('ssrf: redirects');
  });

  it('follows at most 5 redirects', async () => {
    const loop = await listen(redirectTo((req) => `/${Number(req.url!.slice(1) || 0) + 1}`));
    const result = await get(`${loop.origin}/`, { allowHosts: [`127.0.0.1:${loop.port}`], denyHosts: [] });
    expect(result.content).toMatch(/^refused: more than 5 redirects/);
    expect(loop.seen.map((s) => s.url)).toEqual(['/', '/1', '/2', '/3', '/4', '/5']);
  });

  it('changes the method as browsers do: 303 (and 301/302 after POST) to GET without a body, 307/308 keep both', async () => {
    const seenAfter: Record<number, Seen> = {};
    for (const status of [301, 302, 303, 307, 308]) {
      const server = await listen((req, res) =>
        req.url === '/start' ? redirectTo(() => '/end', status)(req, res, []) : res.end('done'),
      );
      const result = await runHttpRequest({
        method: 'POST',
        url: `${server.origin}/start`,
        body: 'payload',
        headers: { 'Content-Type': 'text/plain' },
        policy: { allowHosts: [`127.0.0.1:${server.port}`], denyHosts: [] },
      });
      expect(result.status).toBe('ok');
      expect(result.content).toContain(`url: ${server.origin}/end`);
      seenAfter[status] = server.seen[1]!;
    }
    for (const status of [301, 302, 303]) {
      expect(seenAfter[status]).toMatchObject({ method: 'GET', body: '' });
      expect(seenAfter[status]!.headers['content-type']).toBeUndefined();
    }
    for (const status of [307, 308])
      expect(seenAfter[status]).toMatchObject({ method: 'POST', body: 'payload' });
  });
});

describe('http_request and DNS rebinding', () => {
  it('connects to the address it checked, whatever DNS answers afterwards', async () => {
    const tally = new Tally();
    // 127.0.0.2 stands in for a public address (allowHosts opens it); 127.0.0.1 is the target behind it.
    const checked = await listen(hello, '127.0.0.2');
    const target = await listen(hello, '127.0.0.1', checked.port).catch(() => undefined);
    const policy = { allowHosts: ['127.0.0.2/32'], denyHosts: [] };
    for (let i = 0; i < 5; i++) {
      const dns = fakeDns({ 'rebind.test': [['127.0.0.2'], ['127.0.0.1']] });
      const result = await get(`http://rebind.test:${checked.port}/`, policy, dns.resolve);
      tally.check(
        result.status === 'ok' && dns.calls.length === 1,
        () => `${dns.calls.length} lookups: ${result.content}`,
      );
    }
    tally.check(checked.seen.length === 5, () => `the checked address got ${checked.seen.length} requests`);
    // Every answer counts, not just the first.
    const both = fakeDns({ 'rebind.test': [['127.0.0.2', '127.0.0.1']] });
    const mixed = await get(`http://rebind.test:${checked.port}/`, policy, both.resolve);
    tally.check(refused(mixed), () => `mixed answers: ${mixed.content}`);
    tally.lost = target?.seen.length ?? 0;
    tally.finish('ssrf: dns rebinding');
    expect(target, 'a listener on 127.0.0.1 at the same port').toBeDefined();
  });
});

describe('credentials reach only their apiHosts', () => {
  const TOKEN = `token-${randomBytes(8).toString('hex')}`;
  const credential = (apiHosts: string[], header = 'Authorization'): HttpCredential => ({
    provider: 'acme',
    header,
    value: header === 'Authorization' ? `Bearer ${TOKEN}` : TOKEN,
    apiHosts,
  });
  const leaked = (seen: Seen[]) => seen.filter((s) => JSON.stringify(s.headers).includes(TOKEN)).length;

  it('never sends a provider token outside apiHosts, directly or across a redirect', async () => {
    const tally = new Tally();
    const elsewhere = await listen();
    const api = await listen((req, res) =>
      req.url === '/ok'
        ? res.end('files')
        : redirectTo(() => `${elsewhere.origin}/steal`, req.url === '/307' ? 307 : 302)(req, res, []),
    );
    const policy = { allowHosts: [`127.0.0.1:${api.port}`, `127.0.0.1:${elsewhere.port}`], denyHosts: [] };
    const apiHosts = [`127.0.0.1:${api.port}`];
    const run = (url: string, auth: HttpCredential, headers?: Record<string, string>) =>
      executors.http_request!(
        { method: 'GET', url, ...(headers ? { headers } : {}) },
        {
          dataDir: '',
          sessionId: 's',
          signal: new AbortController().signal,
          shell: { status: { kind: 'unavailable', reason: 'not used by http_request' }, network: 'none' },
          authorization: auth,
          addressPolicy: policy,
        },
      );

    const ok = await run(`${api.origin}/ok`, credential(apiHosts), { authorization: 'Bearer model-written' });
    tally.check(
      ok.status === 'ok' && api.seen[0]?.headers.authorization === `Bearer ${TOKEN}`,
      () => `the api host: ${ok.content}`,
    );

    for (const url of [`${elsewhere.origin}/`, `http://127.0.0.1:${api.port}@127.0.0.1:${elsewhere.port}/`]) {
      const direct = await run(url, credential(apiHosts));
      tally.check(
        refused(direct) && direct.content.includes(`sent only to 127.0.0.1:${api.port}`),
        () => `${url}: ${direct.content}`,
      );
    }
    tally.check(elsewhere.seen.length === 0, () => 'a refused request still reached the other host');

    for (const [hop, auth] of [
      ['/302', credential(apiHosts)],
      ['/307', credential(apiHosts)],
      ['/302', credential(apiHosts, 'X-Api-Key')],
    ] as const) {
      const result = await run(`${api.origin}${hop}`, auth);
      tally.check(result.status === 'ok', () => `${hop}: ${result.content}`);
    }
    tally.check(
      elsewhere.seen.length === 3,
      () => `the redirect target got ${elsewhere.seen.length} requests`,
    );

    // A wildcard matches subdomains only; a provider with no apiHosts sends nothing.
    const dns = fakeDns({ 'evilapi.test': [['127.0.0.1']], 'files.api.test': [['127.0.0.1']] });
    const wildcardPolicy = { allowHosts: ['127.0.0.1'], denyHosts: [] };
    const suffix = await runHttpRequest({
      method: 'GET',
      url: `http://evilapi.test:${elsewhere.port}/`,
      credential: credential(['*.api.test']),
      policy: wildcardPolicy,
      resolve: dns.resolve,
    });
    tally.check(refused(suffix), () => `*.api.test matched evilapi.test: ${suffix.content}`);
    const none = await run(`${api.origin}/ok`, credential([]));
    tally.check(refused(none) && none.content.includes('declares no "apiHosts"'), () => none.content);

    tally.lost = leaked(elsewhere.seen);
    tally.check(leaked(api.seen) === 4, () => `the api host saw the token ${leaked(api.seen)} times`);
    tally.finish('credential exfiltration');
  });

  it('refuses a provider without apiHosts before asking anyone to connect it; presets declare theirs', async () => {
    const providers = resolveProviders(
      {
        acme: { type: 'oauth2', issuer: 'https://id.acme.example' },
        github: { type: 'oauth2', preset: 'github' },
        weather: { type: 'api_key', header: 'X-Api-Key', apiHosts: ['api.weather.test'] },
      },
      { OAUTH_ACME_CLIENT_ID: 'a', OAUTH_GITHUB_CLIENT_ID: 'g' },
    );
    expect(providers.github!.apiHosts).toEqual(['api.github.com', 'uploads.github.com']);
    const credentials = new CredentialService(providers, {
      vaultPath: path.join(mkdtempSync(path.join(os.tmpdir(), 'ssrf-vault-')), 'vault.sqlite'),
      vaultKey: undefined,
    });
    try {
      const acme = await authorizeTool(credentials, 'alice', 'acme', { toApiHostsOnly: true });
      expect(acme).toMatchObject({
        ok: false,
        result: {
          status: 'error',
          content: expect.stringContaining('add "apiHosts": ["<its API host>"] to providers.acme'),
        },
      });
      // MCP servers send to their own URL: no apiHosts needed there.
      expect(await authorizeTool(credentials, 'alice', 'acme')).toMatchObject({
        ok: false,
        result: { status: 'credential_required' },
      });
      expect(await authorizeTool(credentials, 'alice', 'weather', { toApiHostsOnly: true })).toMatchObject({
        ok: false,
        result: { status: 'credential_required' },
      });
    } finally {
      await credentials.close();
    }
  });
});

/** A test CA and a certificate for `secure.test` (openssl), trusted by this process only while a test runs. */
function testCertificates() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ssrf-tls-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
    '-days',
    '1',
    '-subj',
    '/CN=ssrf test CA',
  );
  openssl(
    'req',
    ...ec,
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
    '-subj',
    '/CN=secure.test',
  );
  writeFileSync(file('san.ext'), 'subjectAltName=DNS:secure.test\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.crt'),
    '-days',
    '1',
    '-extfile',
    file('san.ext'),
  );
  return {
    ca: readFileSync(file('ca.crt'), 'utf8'),
    key: readFileSync(file('server.key')),
    cert: readFileSync(file('server.crt')),
  };
}

describe('http_request over TLS to a pinned address', () => {
  it('verifies the certificate against the host name, and drops the credential on a downgrade to http', async () => {
    const tally = new Tally();
    const { ca, key, cert } = testCertificates();
    const systemCAs = tls.getCACertificates('default');
    tls.setDefaultCACertificates([...systemCAs, ca]);
    try {
      const plain = await listen();
      const names: (string | false | null)[] = [];
      const server = https.createServer({ key, cert }, (req, res) => {
        names.push((req.socket as tls.TLSSocket).servername);
        if (req.url === '/down') redirectTo(() => `http://secure.test:${plain.port}/landed`)(req, res, []);
        else res.end('secret files');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      servers.push(server);
      const port = (server.address() as AddressInfo).port;
      const dns = fakeDns({ 'secure.test': [['127.0.0.1']], 'other.test': [['127.0.0.1']] });
      const policy = { allowHosts: ['secure.test', 'other.test'], denyHosts: [] };
      const credential: HttpCredential = {
        provider: 'acme',
        header: 'Authorization',
        value: 'Bearer tls-token',
        apiHosts: ['secure.test'],
      };
      const fetchVia = (url: string) =>
        runHttpRequest({
          method: 'GET',
          url,
          policy,
          resolve: dns.resolve,
          credential: { ...credential, apiHosts: ['secure.test', 'other.test'] },
        });

      const good = await fetchVia(`https://secure.test:${port}/`);
      tally.check(
        good.status === 'ok' && good.content.includes('secret files') && names[0] === 'secure.test',
        () => `secure.test: ${good.content} (SNI ${names[0]})`,
      );
      // Same address, same certificate, another name: the pinned IP does not stand in for the name.
      const wrong = await fetchVia(`https://other.test:${port}/`);
      tally.check(
        wrong.status === 'error' && /altnames|certificate/i.test(wrong.content),
        () => `other.test: ${wrong.content}`,
      );
      const down = await runHttpRequest({
        method: 'GET',
        url: `https://secure.test:${port}/down`,
        policy: { allowHosts: ['secure.test'], denyHosts: [] },
        resolve: dns.resolve,
        credential,
      });
      tally.check(down.status === 'ok' && plain.seen.length === 1, () => `downgrade: ${down.content}`);
      tally.lost = plain.seen.filter((s) => s.headers.authorization).length;
      tally.finish('credential exfiltration: https downgrade');
    } finally {
      tls.setDefaultCACertificates(systemCAs);
    }
  });
});

describe('http_request responses', () => {
  it('reads a huge response as a stream, stops at the cap and closes the connection', async () => {
    const tally = new Tally();
    const FIFTY_MB = 50 * 1024 * 1024;
    let written = 0;
    let closed = false;
    const slow = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(FIFTY_MB) });
      const chunk = Buffer.alloc(16 * 1024, 'a');
      const timer = setInterval(() => {
        res.write(chunk);
        written += chunk.length;
        if (written >= FIFTY_MB) {
          clearInterval(timer);
          res.end();
        }
      }, 10);
      res.on('close', () => {
        closed = true;
        clearInterval(timer);
      });
    });
    const bomb = gzipSync(Buffer.alloc(FIFTY_MB, 'b'));
    const zipped = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const policy = { allowHosts: ['127.0.0.1'], denyHosts: [] };

    const result = await get(`${slow.origin}/big`, policy);
    const body = result.content.split('\n\n').slice(1).join('\n\n');
    tally.check(
      result.status === 'ok' &&
        body.endsWith(`\n…(truncated at ${OUTPUT_CAP} bytes)`) &&
        body.startsWith('a'.repeat(OUTPUT_CAP)),
      () => `slow: ${result.content.slice(-200)}`,
    );
    await expect.poll(() => closed).toBe(true);
    tally.check(written < FIFTY_MB, () => `the server wrote all ${written} bytes`);

    const unzipped = await get(`${zipped.origin}/bomb`, policy);
    tally.check(
      unzipped.content.includes(`${'b'.repeat(OUTPUT_CAP)}\n…(truncated at ${OUTPUT_CAP} bytes)`),
      () => `gzip: ${unzipped.content.slice(-200)}`,
    );
    tally.finish('http: unbounded responses');
  });

  it('honours the abort signal while the server is silent', async () => {
    const silent = await listen(() => undefined);
    const controller = new AbortController();
    const pending = runHttpRequest({
      method: 'GET',
      url: `${silent.origin}/`,
      policy: { allowHosts: ['127.0.0.1'], denyHosts: [] },
      signal: controller.signal,
    });
    await expect.poll(() => silent.seen.length).toBe(1);
    controller.abort();
    expect(await pending).toEqual({ status: 'error', content: 'request failed: cancelled' });
  });
});

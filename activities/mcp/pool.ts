/**
 * Connections to MCP servers with the official SDK client, reused across calls (one per stdio server, one
 * per remote server and person, since remote servers may sign in with the person's token). A failed
 * connection is dropped and made again on next use. Tokens are sent as headers only; they never enter
 * results, history or logs.
 *
 * Remote servers sign in one of two ways: through a configured provider (`auth`), or on their own — the
 * server answers 401 and its `mcp-<server>` provider is discovered the MCP way (see mcp-authorization).
 * Either way a missing or rejected token becomes a credential gate, never a failed call.
 */
import type { McpServerConfig } from '../../infra/config';
import { insufficientScopeOf } from '../../infra/credentials/mcp-authorization';
import { mcpProviderName } from '../../infra/credentials/providers';
import type { CredentialService } from '../../infra/credentials/service';
import type { McpDiscovery, McpToolSpec } from '../../common/tools/mcp';
import { MCP_SEPARATOR } from '../../common/tools/mcp';
import { authorizeTool } from '../tool-credentials';
import { closeInheritedDescriptorsOnce } from '../tools/inherited-descriptors';
import { withOomScore } from '../tools/sandbox';
import { capOutput } from '../tools/output-cap';
import { redact } from '../tools/redact';
import type { ToolRunResult } from '../types';
import type { ElicitAsk, ElicitReply } from '../../common/tools/elicitation';
import { CallInputs, ElicitationBroker, urlAskFromError } from './elicitation';
import {
  isolatedLaunch,
  isolationUnavailable,
  namespacedLaunch,
  namespacesUnavailable,
  type ServerIsolation,
} from './server-uid';

const CONNECT_TIMEOUT_MS = 15_000;
/** How much of a stdio server's stderr is kept to explain a failure. */
const STDERR_TAIL_CHARS = 2_000;

/** `tools`: as of the last look (servers may change them while connected); `justOpened`: that look was now. */
type Connected = {
  client: McpClient;
  tools: McpToolSpec[];
  justOpened: boolean;
  /** The server's questions during calls on this connection (MCP elicitation). */
  questions: ElicitationBroker;
  /**
   * The person's token it was opened with (a process's `tokenEnv`, a remote server's bearer): a refusal of it is
   * not a refusal of a token stored since. A person's own process: its calls in flight and last use.
   */
  token?: string;
  perPersonProcess: boolean;
  busy: number;
  lastUsed: number;
  /** The scopes the server's latest 403 asked for (insufficient_scope), read from its answer by our fetch. */
  stepUp: { scopes?: string[] };
};

/** A person's own stdio server process is stopped after this long unused (started again on next use). */
const IDLE_PROCESS_MS = 10 * 60_000;

/** The server refused the request for want of a (valid) token. */
class SignInRequired extends Error {}

/**
 * The MCP SDK, loaded when the first server is opened: a worker without MCP servers never pays its 0.2 s of
 * start, and one with them pays it once.
 */
async function importSdk() {
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const { ElicitRequestSchema, McpError, ErrorCode } = types;
  return { ...client, ...stdio, ...http, ElicitRequestSchema, McpError, ErrorCode };
}
type McpSdk = Awaited<ReturnType<typeof importSdk>>;
type McpClient = InstanceType<McpSdk['Client']>;
let sdk: McpSdk | undefined;
async function loadSdk(): Promise<McpSdk> {
  return (sdk ??= await importSdk());
}

/** 401 only: a 403 is a refusal of a valid token (missing permission), and signing in again would not help. */
const isUnauthorized = (error: unknown) =>
  sdk !== undefined && error instanceof sdk.StreamableHTTPError && error.code === 401;
/** A 403: signing in again helps only when the server said which scopes it wants (a step-up). */
const is403 = (error: unknown) =>
  sdk !== undefined && error instanceof sdk.StreamableHTTPError && error.code === 403;

/** The server's question, raised as an error (URL mode): asked like one made as a request. */
const urlQuestionIn = (error: unknown) =>
  sdk !== undefined && error instanceof sdk.McpError && error.code === sdk.ErrorCode.UrlElicitationRequired
    ? error.data
    : undefined;

/** A server that could not be reached is tried again in the background after this long, doubling up to the ceiling. */
const DOWN_FIRST_RETRY_MS = 1_000;
const DOWN_MAX_RETRY_MS = 30_000;

/** A server that failed to connect: until `retryAt`, every use is answered at once instead of waiting on it again. */
type Down = { since: number; retryAt: number; backoffMs: number; message: string };

export class McpPool {
  private readonly connections = new Map<string, Promise<Connected>>();
  private readonly down = new Map<string, Down>();
  /** Open connections by key (those of `connections` that opened), for the idle sweep. */
  private readonly settled = new Map<string, Connected>();

  constructor(
    private readonly servers: Record<string, McpServerConfig>,
    private readonly credentials: () => CredentialService,
    private readonly options: {
      firstRetryMs?: number;
      /** How long a person's own stdio server process may sit unused before it is stopped. */
      idleProcessMs?: number;
      log?: (message: string, fields: object) => void;
      /** Stdio servers under uids of their own (server-uid.ts): the worker passes its DATA_DIR's. */
      isolation?: ServerIsolation;
    } = {},
  ) {
    const stdio = Object.entries(servers).filter(([, s]) => s.command && s.ownUid !== false);
    const noUid = options.isolation && stdio.length ? isolationUnavailable() : undefined;
    const noNamespaces = noUid ? namespacesUnavailable() : undefined;
    if (noUid && noNamespaces)
      options.log?.(
        "MCP stdio servers run as the worker's user with nothing between them: one person's server could read another's token",
        { reason: `${noUid}; ${noNamespaces}`, servers: stdio.map(([name]) => name) },
      );
    const perPerson = Object.values(servers).some((s) => s.command && (s.perPerson || s.auth));
    if (perPerson) {
      const every = Math.min(60_000, Math.max(100, (options.idleProcessMs ?? IDLE_PROCESS_MS) / 2));
      setInterval(() => this.stopIdleProcesses(), every).unref();
    }
  }

  get configured(): string[] {
    return Object.keys(this.servers);
  }

  server(name: string): McpServerConfig | undefined {
    return Object.hasOwn(this.servers, name) ? this.servers[name] : undefined;
  }

  /** Every configured server's tools; a server that is down is reported, the others still listed. */
  async discover(userId: string): Promise<McpDiscovery> {
    const tools: McpToolSpec[] = [];
    const errors: McpDiscovery['errors'] = [];
    await Promise.all(
      this.configured.map(async (name) => {
        const server = this.servers[name]!;
        // Until the person signs in, the server offers one tool: connecting it (which opens the gate).
        const connectTool: McpToolSpec = {
          name: `${name}${MCP_SEPARATOR}connect`,
          server: name,
          tool: 'connect',
          description: `Connect the "${name}" tool server (asks the user to sign in); its tools become available afterwards.`,
          parameters: { type: 'object', properties: {}, additionalProperties: false },
          readOnly: true,
          destructive: false,
        };
        if (server.auth && !(await this.credentials().authorization(userId, server.auth)).ok) {
          tools.push(connectTool);
          return;
        }
        try {
          tools.push(...(await this.currentTools(name, userId)));
        } catch (error) {
          if (error instanceof SignInRequired) tools.push(connectTool);
          else errors.push({ server: name, message: (error as Error).message.slice(0, 300) });
        }
      }),
    );
    tools.sort((a, b) => a.name.localeCompare(b.name));
    return { tools, errors };
  }

  /**
   * Before a call (nothing has run yet): a result that ends it without running anything —
   * unknown server, missing sign-in (a credential gate), or the synthetic `connect` tool once signed in.
   */
  async precheck(name: string, tool: string, userId: string): Promise<ToolRunResult | undefined> {
    const server = this.server(name);
    if (!server) return { status: 'error', content: `no MCP server "${name}" is configured` };
    const provider = this.providerOf(name);
    // A server signing in on its own may also work without a token: only `connect` insists on one.
    if (provider && (server.auth || tool === 'connect')) {
      const auth = await authorizeTool(this.credentials(), userId, provider);
      if (!auth.ok) return auth.result;
      if (tool === 'connect') {
        // "Connected" only if the server takes the stored token (renewed if need be); else the person signs in.
        try {
          await this.currentTools(name, userId);
        } catch (error) {
          if (error instanceof SignInRequired) return await this.signInAgain(name, userId);
          return {
            status: 'error',
            content: `the "${name}" tool server is unavailable: ${(error as Error).message.slice(0, 300)}`,
          };
        }
        return { status: 'ok', content: `Connected. The "${name}" tools are available now.` };
      }
    }
    return undefined;
  }

  /** The credential provider a remote server signs in through, if any. */
  private providerOf(name: string): string | undefined {
    const server = this.server(name);
    if (!server) return undefined;
    // A stdio server holds a person's token only when configured to (`auth` + `tokenEnv`).
    const provider = server.url ? (server.auth ?? mcpProviderName(name)) : server.auth;
    if (!provider) return undefined;
    return this.credentials().provider(provider) ? provider : undefined;
  }

  /**
   * The server refused the token (`refused`, the one the connection held, when known): true when a renewed one is
   * stored (the connection holding the old one is dropped).
   */
  private async renewAfterRefusal(
    name: string,
    userId: string,
    refused?: string,
  ): Promise<'renewed' | 'stored since' | false> {
    const provider = this.providerOf(name);
    const outcome = provider && (await this.credentials().renewRejected(userId, provider, refused));
    if (!outcome) return false;
    this.drop(name, userId);
    return outcome;
  }

  /**
   * MCP's scope step-up: the stored sign-in is kept (it still works for what it grants) and marked with the scopes
   * the server asked for, which the next sign-in asks for too (gateways/oauth/flow-start.ts); the call waits at a
   * credential gate meanwhile. A sign-in that already holds every scope asked for is not asked again: the call is
   * refused in words instead of looping.
   */
  private async askForScopes(name: string, userId: string, asked: string[]): Promise<ToolRunResult> {
    const providerName = this.providerOf(name)!;
    const credentials = this.credentials();
    const provider = credentials.provider(providerName)!;
    const stored = await credentials.vault.get(userId, providerName);
    const held = (stored?.scope ?? '').split(' ').filter(Boolean);
    if (asked.length && held.length && asked.every((scope) => held.includes(scope)))
      return {
        status: 'error',
        content: `the "${name}" tool server refused this call for lack of permission, although the sign-in grants what it asks for (${asked.join(' ')})`,
      };
    const wanted = [...new Set([...held, ...asked])];
    if (stored) {
      const { userId: _user, provider: _provider, expiresAt, updatedAt: _updated, ...secret } = stored;
      await credentials.vault.put(
        userId,
        providerName,
        { ...secret, wantScope: wanted.join(' ') },
        expiresAt,
      );
    }
    this.drop(name, userId);
    return {
      status: 'credential_required',
      content: `the "${name}" tool server needs more access than the current sign-in grants (${asked.join(', ') || 'more scopes'}): nothing ran; the user must sign in to ${provider.displayName} again to grant it.`,
      credential: {
        provider: providerName,
        providerName: provider.displayName,
        kind: 'oauth2',
        note: `The "${name}" tool server needs more access: ${asked.join(', ') || 'more scopes'}.`,
      },
    };
  }

  /** A missing or rejected token: the credential gate, after forgetting a token the server no longer takes. */
  private async signInAgain(name: string, userId: string): Promise<ToolRunResult> {
    const provider = this.providerOf(name)!;
    const credentials = this.credentials();
    if (await credentials.vault.delete(userId, provider)) this.drop(name, userId);
    const auth = await authorizeTool(credentials, userId, provider);
    return auth.ok
      ? { status: 'error', content: `the "${name}" tool server refused the sign-in` }
      : auth.result;
  }

  async call(
    name: string,
    tool: string,
    args: Record<string, unknown>,
    userId: string,
    signal: AbortSignal,
    /** Replies to what the server asked in earlier rounds of this call, in order. */
    inputs: readonly ElicitReply[] = [],
  ): Promise<ToolRunResult> {
    const server = this.server(name)!;
    const asking = new CallInputs(inputs);
    /** The connection the call was last made on (retired if its server asked: see ElicitationBroker). */
    let used: Connected | undefined;
    let connected: Connected;
    try {
      await this.withCurrentToken(name, userId);
      connected = await this.connect(name, userId);
    } catch (error) {
      if (error instanceof SignInRequired) return await this.signInAgain(name, userId);
      return {
        status: 'error',
        content: `the "${name}" tool server is unavailable: ${(error as Error).message}`,
      };
    }
    const callOnce = async (on: Connected) => {
      used = on;
      on.busy++;
      try {
        return await on.questions.during(asking, () =>
          on.client.callTool({ name: tool, arguments: args }, undefined, {
            signal: AbortSignal.any([signal, asking.cut.signal]),
            timeout: server.timeout === 'never' ? undefined : server.timeout,
          }),
        );
      } finally {
        on.busy--;
        on.lastUsed = Date.now();
      }
    };
    const attempt = async () => {
      try {
        return await callOnce(connected);
      } catch (error) {
        // The connection had closed before anything was sent (the SDK says "Not connected"): connect again and
        // make the call, once. Anything else may have reached the server and is not repeated.
        if (!(error instanceof Error && error.message === 'Not connected')) throw error;
        this.drop(name, userId);
        return await callOnce(await this.connect(name, userId));
      }
    };
    /**
     * Refused for its token (nothing ran): the call is made once more on a new connection (a pooled one holds the
     * old bearer) with the token stored since, or else one renewed with the refresh token; a token stored since
     * and refused too is renewed in turn. Only when that fails is the person asked to sign in.
     */
    const afterRefusal = async (
      error: unknown,
      /** The token refused, when known; none: the stored one was (refused as the connection opened). */
      refused: string | undefined,
      storedRefusedToo: boolean,
    ): Promise<Awaited<ReturnType<typeof callOnce>>> => {
      const refusal = isUnauthorized(error) || (storedRefusedToo && error instanceof SignInRequired);
      const outcome = refusal && (await this.renewAfterRefusal(name, userId, refused));
      if (!outcome) throw error;
      try {
        return await callOnce(await this.connect(name, userId));
      } catch (again) {
        if (outcome === 'stored since' && !storedRefusedToo)
          return await afterRefusal(again, undefined, true);
        throw again;
      }
    };
    try {
      const result = await attempt().catch((error: unknown) => afterRefusal(error, used?.token, false));
      if (asking.asked) return this.inputRequired(name, userId, used!, asking.asked);
      const text = (Array.isArray(result.content) ? result.content : [])
        .map((part: { type: string; text?: string }) =>
          part.type === 'text' ? (part.text ?? '') : `[${part.type} content]`,
        )
        .join('\n');
      // A server may echo the token it was started or called with: it never reaches the conversation.
      return redact(
        { status: result.isError ? 'error' : 'ok', content: capOutput(text || '(no content)') },
        used?.token,
      );
    } catch (error) {
      // Cut short because the server asked the person something: the session asks, then calls again.
      const asked = asking.asked ?? urlAskFromError(name, urlQuestionIn(error));
      if (asked) return this.inputRequired(name, userId, used, asked);
      // The token is good but grants too little for this call (a 403 asking for more scopes): nothing ran; the
      // person signs in again, asked for those scopes too.
      if (is403(error) && used?.stepUp.scopes && this.providerOf(name))
        return await this.askForScopes(name, userId, used.stepUp.scopes);
      // The server refused the token (revoked, expired on its side): nothing ran; sign in again.
      // (A renewed token refused as the connection opens is the same: SignInRequired.)
      if ((isUnauthorized(error) || error instanceof SignInRequired) && this.providerOf(name))
        return await this.signInAgain(name, userId);
      // A broken connection is made again next time; the error is a result the model can act on.
      this.drop(name, userId);
      return redact(
        {
          status: 'error',
          content: `${name}${MCP_SEPARATOR}${tool} failed: ${(error as Error).message.slice(0, 500)}`,
        },
        used?.token,
      );
    }
  }

  /**
   * The call did not complete: its server asks the person first (the session asks, then makes the call again). A
   * connection whose call was cut short is retired: the server's handler may still ask, and could not be told apart.
   */
  private inputRequired(
    name: string,
    userId: string,
    on: Connected | undefined,
    asked: ElicitAsk,
  ): ToolRunResult {
    if (on && !on.questions.isRetired) {
      const key = this.key(name, userId);
      const pending = this.connections.get(key);
      void pending?.then((current) => {
        if (current === on && this.connections.get(key) === pending) this.connections.delete(key);
      });
      on.questions.retire(() => void on.client.close().catch(() => {}));
    }
    return {
      status: 'input_required',
      content: `the "${asked.server}" tool server asks the person: ${asked.message}`,
      input: asked,
    };
  }

  /**
   * A server's tools as this person sees them. A token it refuses (revoked or rotated on its side) is renewed with
   * the refresh token first, as a call does: only when that fails does the list offer `connect` again, so a silent
   * renewal never hides the tools from the model in between.
   */
  private async currentTools(name: string, userId: string): Promise<McpToolSpec[]> {
    try {
      return await this.listTools(name, userId);
    } catch (error) {
      if (!(error instanceof SignInRequired)) throw error;
      // A store that cannot renew now is a sign-in to offer, not a server that is down. Nothing is deleted here: a
      // provider may serve other servers too, and only the person's own `connect` (precheck) replaces the token.
      const renewed = await this.renewAfterRefusal(name, userId).catch(() => false);
      if (!renewed) throw error;
      return await this.listTools(name, userId);
    }
  }

  /** The server's tools now: a live connection is asked again, since servers may change their tools. */
  private async listTools(name: string, userId: string): Promise<McpToolSpec[]> {
    const connected = await this.connect(name, userId);
    if (connected.justOpened) {
      connected.justOpened = false;
      return connected.tools;
    }
    try {
      const listed = await connected.client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS });
      connected.tools = listed.tools.map((tool) => toSpec(name, tool));
      this.checkNamedTools(name, connected.tools);
      return connected.tools;
    } catch (error) {
      // A connection that broke since (a restarted server, an expired session) is made again once.
      this.drop(name, userId);
      if (isUnauthorized(error) && this.providerOf(name))
        throw new SignInRequired(`the "${name}" tool server needs a sign-in`, { cause: error });
      return (await this.connect(name, userId)).tools;
    }
  }

  /** One connection per server, or per server and person: remote servers, and stdio ones per person or with a token. */
  private key(name: string, userId: string): string {
    const server = this.servers[name];
    return server?.url || server?.perPerson || server?.auth ? `${name}\n${userId}` : name;
  }

  /**
   * A per-person process started with a token that is no longer the person's current one (renewed, or signed in
   * again) is replaced before the call, so a server never works with a token the person's credential replaced.
   */
  private async withCurrentToken(name: string, userId: string): Promise<void> {
    const server = this.servers[name]!;
    if (!server.command || !server.auth) return;
    const pending = this.connections.get(this.key(name, userId));
    if (!pending) return;
    const auth = await this.credentials().authorization(userId, server.auth);
    const connected = await pending.catch(() => undefined);
    if (connected && (!auth.ok || connected.token !== auth.token)) this.drop(name, userId);
  }

  /** Stops per-person server processes nobody used for a while (they start again on next use). */
  private stopIdleProcesses(): void {
    const idleMs = this.options.idleProcessMs ?? IDLE_PROCESS_MS;
    for (const [key, connected] of this.settled) {
      if (!connected.perPersonProcess) continue;
      if (connected.busy > 0 || Date.now() - connected.lastUsed < idleMs) continue;
      // By its key as it is: a person's id may itself hold a line break (the key's separator).
      this.options.log?.('MCP server process stopped while idle', {
        server: key.slice(0, key.indexOf('\n')),
      });
      this.dropKey(key);
    }
  }

  private drop(name: string, userId: string): void {
    this.dropKey(this.key(name, userId));
  }

  private dropKey(key: string): void {
    const pending = this.connections.get(key);
    this.connections.delete(key);
    this.settled.delete(key);
    void pending?.then((c) => c.client.close()).catch(() => {});
  }

  private connect(name: string, userId: string): Promise<Connected> {
    const key = this.key(name, userId);
    let pending = this.connections.get(key);
    const down = this.down.get(key);
    // Known down: answered at once (nobody waits on its connect timeout again); a timer retries it in the
    // background with backoff, and the first use after it is back finds it connected.
    if (!pending && down) return Promise.reject(new Error(describeDown(down)));
    if (!pending) {
      pending = this.adopt(key, this.open(name, userId), { name, userId });
    }
    return pending;
  }

  /** A connection being opened (or just opened) becomes the pool's for `key`; a failure marks the server down. */
  private adopt(
    key: string,
    opening: Promise<Connected>,
    /** Who opened it: a failure marks the server down and retries it as them. */
    down?: { name: string; userId: string },
  ): Promise<Connected> {
    opening.then(
      // A server that ends (a stdio process that died) leaves the pool at once: the next use connects again.
      (connected) => {
        this.down.delete(key);
        this.settled.set(key, connected);
        connected.client.onclose = () => {
          if (this.connections.get(key) === opening) this.connections.delete(key);
          if (this.settled.get(key) === connected) this.settled.delete(key);
        };
      },
      (error: unknown) => {
        if (this.connections.get(key) === opening) this.connections.delete(key);
        if (down && !(error instanceof SignInRequired)) this.markDown(key, down.name, down.userId, error);
      },
    );
    this.connections.set(key, opening);
    return opening;
  }

  private markDown(key: string, name: string, userId: string, error: unknown): void {
    const before = this.down.get(key);
    const backoffMs = before
      ? Math.min(before.backoffMs * 2, DOWN_MAX_RETRY_MS)
      : (this.options.firstRetryMs ?? DOWN_FIRST_RETRY_MS);
    const message = (error as Error).message.slice(0, 300);
    this.down.set(key, {
      since: before?.since ?? Date.now(),
      retryAt: Date.now() + backoffMs,
      backoffMs,
      message,
    });
    this.options.log?.('MCP server unavailable', { server: name, error: message, retryInMs: backoffMs });
    setTimeout(() => this.retryInBackground(key, name, userId), backoffMs).unref();
  }

  /** One background attempt: connected (kept for the next use), or down for longer. */
  private retryInBackground(key: string, name: string, userId: string): void {
    if (!this.down.has(key) || this.connections.has(key)) return;
    void this.open(name, userId).then(
      (connected) => {
        this.down.delete(key);
        void this.adopt(key, Promise.resolve(connected));
        this.options.log?.('MCP server back', { server: name });
      },
      (error: unknown) => {
        if (error instanceof SignInRequired) this.down.delete(key);
        else this.markDown(key, name, userId, error);
      },
    );
  }

  private async open(name: string, userId: string): Promise<Connected> {
    const server = this.servers[name]!;
    const {
      Client,
      StdioClientTransport,
      StreamableHTTPClientTransport,
      getDefaultEnvironment,
      ElicitRequestSchema,
    } = await loadSdk();
    // Servers may ask the person during a call (elicitation): forms (defaults filled in) and links.
    const client = new Client(
      { name: 'durable-agent-runtime', version: '0.2.0' },
      // Defaults are the server's to apply: the person was not shown them as answers.
      { capabilities: { elicitation: { form: {}, url: {} } } },
    );
    const questions = new ElicitationBroker(name, this.options.log);
    client.setRequestHandler(
      ElicitRequestSchema,
      (request) => questions.answer(request.params) as { action: 'accept' | 'decline' | 'cancel' },
    );
    let transport;
    let stderrTail = '';
    let token: string | undefined;
    const stepUp: Connected['stepUp'] = {};
    if (server.command) {
      // The server is the operator's program, not ours: what the worker's own starter left open (a log file,
      // a job runner's pipe) is not its to read or write. Node marks only low-numbered inherited descriptors
      // close-on-exec; the rest would pass on to it.
      closeInheritedDescriptorsOnce();
      // A server that runs the worker's host out of memory is what the OOM killer ends (its connection is made
      // again on next use), not the worker.
      const env: Record<string, string> = { ...getDefaultEnvironment(), ...server.env };
      // The person's own process: their token in the variable the operator named, never in its arguments or logs.
      if (server.auth && server.tokenEnv) {
        const auth = await this.credentials().authorization(userId, server.auth);
        if (!auth.ok) throw new SignInRequired(`the "${name}" tool server needs a sign-in`);
        env[server.tokenEnv] = auth.token;
        token = auth.token;
      }
      const [command, args] = withOomScore(server.command, server.args, env.PATH);
      const perPerson = this.key(name, userId) !== name;
      const isolation = server.ownUid === false ? undefined : this.options.isolation;
      const launch = !isolation
        ? { command, args, env }
        : !isolationUnavailable()
          ? isolatedLaunch(
              isolation,
              { server: name, userId: perPerson ? userId : undefined },
              { command, args, env },
            )
          : !namespacesUnavailable()
            ? namespacedLaunch(isolation, { command, args, env })
            : { command, args, env };
      transport = new StdioClientTransport({
        command: launch.command,
        args: launch.args,
        env: launch.env,
        ...(launch.cwd ? { cwd: launch.cwd } : {}),
        stderr: 'pipe',
      });
      // What the server says on stderr (bounded): a crash at start is explained by it, not by "Connection closed".
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderrTail = `${stderrTail}${chunk.toString('utf8')}`.slice(-STDERR_TAIL_CHARS);
      });
    } else {
      const headers: Record<string, string> = {};
      const provider = this.providerOf(name);
      if (provider) {
        const auth = await this.credentials().authorization(userId, provider);
        if (auth.ok) {
          headers[auth.header] = auth.value;
          token = auth.token;
        }
      }
      // The SDK's error for a 403 carries no headers: the answer is read here for a scope step-up's challenge.
      transport = new StreamableHTTPClientTransport(new URL(server.url!), {
        requestInit: { headers },
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          const scopes = await insufficientScopeOf(response);
          if (scopes) stepUp.scopes = scopes;
          return response;
        },
      });
    }
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      const listed = await client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS });
      const tools = listed.tools.map((tool) => toSpec(name, tool));
      this.checkNamedTools(name, tools);
      return {
        client,
        tools,
        justOpened: true,
        questions,
        ...(token ? { token } : {}),
        perPersonProcess: !!server.command && this.key(name, userId) !== name,
        busy: 0,
        lastUsed: Date.now(),
        stepUp,
      };
    } catch (error) {
      if (error instanceof MisnamedTool) {
        await client.close().catch(() => {});
        throw error;
      }
      await client.close().catch(() => {});
      if (isUnauthorized(error) && this.providerOf(name))
        throw new SignInRequired(`the "${name}" tool server needs a sign-in`, { cause: error });
      // Give the process a moment to finish saying why it ended.
      if (server.command) await new Promise((resolve) => setTimeout(resolve, 100));
      const said = stderrTail.trim().split('\n').slice(-3).join(' / ');
      // What it said may hold the token it was started with (a server printing its environment): never told.
      const why = redact(
        {
          status: 'error',
          content: `cannot reach it (${(error as Error).message.slice(0, 200)})${said ? `; it said: ${said.slice(-400)}` : ''}`,
        },
        token,
      ).content;
      // The caught error is not kept as the cause: its message may hold the token (logged with the cause).
      // eslint-disable-next-line preserve-caught-error
      throw new Error(why);
    }
  }

  /** The policy for one MCP tool: per-tool override, then per-server, then the tool's annotations. */
  async policy(name: string, tool: string, userId: string): Promise<'auto' | 'ask' | 'deny'> {
    const server = this.server(name);
    if (!server) return 'deny';
    const override = server.tools[tool]?.policy ?? server.policy;
    if (override) return override;
    if (tool === 'connect' && this.providerOf(name)) return 'auto';
    // A server's own annotations only relax the policy when the operator trusts them (`trustAnnotations`).
    if (!server.trustAnnotations) return 'ask';
    const spec = (await this.connect(name, userId).catch(() => undefined))?.tools.find(
      (t) => t.tool === tool,
    );
    return spec?.readOnly && !spec.destructive ? 'auto' : 'ask';
  }

  /**
   * Every tool the policy names under `mcpServers.<name>.tools` must be one the server offers: a misspelled entry
   * (a deny that would not apply) makes the whole server unavailable, with the name to fix, instead of letting the
   * tool it meant run under the default.
   */
  private checkNamedTools(name: string, tools: readonly McpToolSpec[]): void {
    const offered = new Set(tools.map((t) => t.tool));
    const unknown = Object.keys(this.servers[name]?.tools ?? {}).filter((tool) => !offered.has(tool));
    if (unknown.length)
      throw new MisnamedTool(
        `the policy names ${unknown.map((t) => `"${t}"`).join(', ')} under mcpServers.${name}.tools, which this server does not offer (it offers ${[...offered].map((t) => `"${t}"`).join(', ') || 'no tools'}); fix the name in the policy file`,
      );
  }

  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((p) => p.then((c) => c.client.close()).catch(() => {})));
  }
}

/** A policy entry naming a tool the server does not offer: the server is refused until the policy is fixed. */
class MisnamedTool extends Error {}

type ListedTool = Awaited<ReturnType<McpClient['listTools']>>['tools'][number];

function toSpec(server: string, tool: ListedTool): McpToolSpec {
  return {
    name: `${server}${MCP_SEPARATOR}${tool.name}`,
    server,
    tool: tool.name,
    description: (tool.description ?? tool.title ?? tool.name).slice(0, 1_000),
    parameters: tool.inputSchema as Record<string, unknown>,
    readOnly: tool.annotations?.readOnlyHint === true,
    destructive: tool.annotations?.destructiveHint === true,
  };
}

function describeDown(down: Down): string {
  const since = new Date(down.since).toISOString().slice(11, 16);
  return `${down.message} (unreachable since ${since} UTC; tried again in the background, next in ${Math.ceil(Math.max(0, down.retryAt - Date.now()) / 1000)} s)`;
}

/**
 * Every setting in one place: environment variables (the contract in the README) and the optional
 * policy file `agent.config.json` (or `AGENT_CONFIG`). Parsed once at the edge; bad input names the
 * variable and the fix.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { durationSchema } from '../common/duration';
import { resolveTool } from '../common/tools/registry';
import { admitsAnyone, namesSomeone, type SignInRule } from '../common/sign-in-rule';
import { providerNameSchema } from '../common/ids';
import {
  resolveMcpProviders,
  resolveProviders,
  providersSchema,
  type Provider,
} from './credentials/providers';
import { AgentError, ErrorCode } from '../common/errors';
import { unsatisfiableApprovals } from '../common/approval-rules';

const policyChoice = z.enum(['auto', 'ask', 'deny']);

/** A pattern for allow/deny lists, grants and `when` rules: matched in linear time, bounded in length. */
const patternSchema = z.string().min(1).max(500);

/**
 * An argument rule: every named argument must match one of its patterns (a string or a list), and then
 * `policy` applies. Rules are tried in order; the first that matches wins over the tool's `policy`.
 */
const whenRuleSchema = z.strictObject({
  match: z.record(z.string().min(1).max(64), z.union([patternSchema, z.array(patternSchema).min(1).max(50)])),
  policy: policyChoice,
});

/**
 * Escalation: an approval nobody decided within `after` is put to `to` as well (they may decide from then on),
 * told in the conversation and asked where the prompt is.
 */
const escalateSchema = z.strictObject({
  after: durationSchema.refine(
    (ms) => typeof ms === 'number',
    '"after" is a duration such as "2h" (not "never")',
  ),
  to: z.array(z.string().min(1).max(128)).min(1).max(20),
});

const toolConfigSchema = z.strictObject({
  policy: policyChoice.optional(),
  allow: z.array(patternSchema).default([]),
  deny: z.array(patternSchema).default([]),
  approvalTimeout: durationSchema.optional(),
  /** Argument rules that pick auto/ask/deny before the tool's policy (first match wins). */
  when: z.array(whenRuleSchema).max(50).default([]),
  /** People who may approve this tool (in addition to nobody else: replaces the top-level list). */
  approvers: z.array(z.string().min(1)).optional(),
  /** false: the person who asked may not approve their own call (four-eyes). */
  selfApprove: z.boolean().optional(),
  /** How many distinct approvers an approval needs (M of N); one deny ends it. */
  approvals: z.number().int().min(1).max(10).optional(),
  /** Who else is asked when nobody decided in time (replaces the top-level `escalate`). */
  escalate: escalateSchema.optional(),
  /** shell_execute's network inside the sandbox. */
  network: z.enum(['none', 'full']).optional(),
  /**
   * Arguments the audit export and the audit log show as "(secret)" (their digest stays): names, or "*" for all.
   * The decision page still shows them to the people who decide.
   */
  secretArgs: z.array(z.string().min(1).max(128)).max(50).default([]),
});

/** An MCP server: a local command (stdio) or a Streamable HTTP URL, optionally signed in through a provider. */
export const mcpServerSchema = z
  .strictObject({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    url: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * A credential provider (see "providers"): the person's token is sent as a bearer token (remote), or given to a
     * process of the person's own in the environment variable `tokenEnv` (stdio).
     */
    auth: providerNameSchema.optional(),
    /** stdio with `auth`: the environment variable that carries the person's token to their own server process. */
    tokenEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]{0,63}$/, 'an environment variable name, e.g. GITHUB_TOKEN')
      .optional(),
    /**
     * stdio: one server process per person instead of one shared by everyone (always so with `auth`). Idle
     * processes are stopped after 10 minutes and started again on next use.
     */
    perPerson: z.boolean().optional(),
    /**
     * stdio, with the worker running as root: the process runs under a uid of its own (per person for a person's
     * own process), so no server reads another's token or the worker's secrets (activities/mcp/server-uid.ts).
     * `false` runs it as the worker's user, for a server that must read the worker's own files.
     */
    ownUid: z.boolean().optional(),
    /**
     * A remote server that asks for a sign-in itself (MCP authorization: OAuth 2.1 + PKCE, discovered from
     * the server). Needed only when its authorization server does not register clients dynamically.
     */
    oauth: z
      .strictObject({
        clientId: z.string().min(1).max(300).optional(),
        scopes: z.array(z.string().min(1).max(200)).max(50).optional(),
        displayName: z.string().min(1).max(60).optional(),
      })
      .optional(),
    /** Policy for every tool of this server; without it, every tool asks (see `trustAnnotations`). */
    policy: policyChoice.optional(),
    /**
     * The server's own `readOnlyHint` may make a tool run without asking. Off by default: a server's claim about its
     * tools only tightens the policy (a destructive hint), never relaxes it, unless the operator says so here.
     */
    trustAnnotations: z.boolean().default(false),
    tools: z.record(z.string(), z.strictObject({ policy: policyChoice })).default({}),
    timeout: durationSchema.default(60_000),
  })
  .refine((s) => (s.command ? !s.url : !!s.url), {
    message: 'give either "command" (stdio) or "url" (HTTP)',
  })
  .refine((s) => !s.oauth || (s.url && !s.auth), {
    message: '"oauth" is for a remote ("url") server that signs in on its own; it cannot go with "auth"',
  })
  .refine((s) => !s.command || !s.auth === !s.tokenEnv, {
    message:
      'a stdio server with "auth" needs "tokenEnv" (the environment variable its process reads the person\'s token from), and "tokenEnv" needs "auth"',
  })
  .refine(
    (s) => !s.url || (s.tokenEnv === undefined && s.perPerson === undefined && s.ownUid === undefined),
    {
      message:
        '"tokenEnv", "perPerson" and "ownUid" are for stdio ("command") servers; remote servers are per person already',
    },
  );
export type McpServerConfig = z.infer<typeof mcpServerSchema>;

/** A budget limit: dollars (needs a price for the model), tokens, or both (whichever is reached first). */
const limitSchema = z
  .strictObject({
    usd: z.number().positive().max(1_000_000).optional(),
    tokens: z.number().int().positive().max(1e12).optional(),
  })
  .refine(
    (limit) => limit.usd !== undefined || limit.tokens !== undefined,
    'a limit needs "usd", "tokens" or both',
  );

export const policyFileSchema = z.strictObject({
  approvers: z.array(z.string().min(1)).default([]),
  /** Default for every tool: may the requester approve their own call? */
  selfApprove: z.boolean().default(true),
  /** Default for every tool: distinct approvals needed. */
  approvals: z.number().int().min(1).max(10).default(1),
  /** Default for every tool: who else is asked when nobody decided an approval in time. */
  escalate: escalateSchema.optional(),
  /** shell_execute runs under bubblewrap; "off" runs it unsandboxed (a warning at every start). */
  sandbox: z.enum(['bwrap', 'off']).default('bwrap'),
  /** http_request may reach these otherwise refused (private, loopback, link-local) hosts or CIDRs. */
  allowHosts: z.array(z.string().min(1).max(300)).max(200).default([]),
  /** http_request never reaches these hosts (patterns) or CIDRs. */
  denyHosts: z.array(z.string().min(1).max(300)).max(200).default([]),
  /**
   * One person, one identity across channels: a web sign-in identity (OpenID `sub` or
   * `preferred_username`) mapped to the Slack and Discord user ids that are the same person.
   */
  users: z
    .record(
      z
        .string()
        .regex(/^[A-Za-z0-9._@-]{1,120}$/, 'a user name is 1-120 letters, digits or . _ @ -')
        .refine((name) => name !== 'local', '"local" is the local mode\'s user'),
      z.strictObject({
        /** The OpenID Connect subjects (`sub`) that sign in as this person (sign-in mode). */
        sub: z.array(z.string().min(1).max(255)).default([]),
        slack: z.array(z.string().regex(/^[A-Z0-9]{2,40}$/)).default([]),
        discord: z.array(z.string().regex(/^\d{5,25}$/)).default([]),
        /** Their Microsoft Entra object ids (Teams' `from.aadObjectId`), e.g. 00000000-0000-0000-0000-000000000000. */
        teams: z
          .array(z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i))
          .optional(),
        /** Their e-mail address, as the operator verified it: gates they may decide are mailed here (SMTP_URL). */
        email: z.email().max(254).optional(),
      }),
    )
    .default({}),
  approvalTimeout: durationSchema.default(24 * 3_600_000),
  /** How long an ask_user question waits before the model gets "no answer". */
  questionTimeout: durationSchema.default(24 * 3_600_000),
  /** Chat platforms: post a still-open gate again after this long ("never" to turn reminders off). */
  reminderAfter: durationSchema.default(3_600_000),
  maxSteps: z.number().int().min(1).max(100).default(12),
  /** The model fallback chain, as MODEL_FALLBACKS writes it (`provider:model` each); MODEL_FALLBACKS wins when set. */
  modelFallbacks: z.array(z.string().min(3).max(200)).max(10).optional(),
  /** History events after which an idle session continues as new (Temporal warns at 10,240). */
  continueAsNewAfterEvents: z.number().int().min(20).max(40_000).default(10_000),
  systemPrompt: z.string().max(20_000).optional(),
  /**
   * The model's context window in tokens: each request is built to fit it (recent turns verbatim, older ones
   * summarised, long tool results shortened for the model). Set it to your model's window; default 32,000.
   */
  contextTokens: z.number().int().min(4_000).max(10_000_000).optional(),
  tools: z.record(z.string(), toolConfigSchema).default({}),
  /** Credential providers (OAuth 2.0 and API keys) that tools name with `auth`; see README "Credentials". */
  providers: providersSchema,
  /** MCP tool servers by name; their tools reach the model as `<server>__<tool>`. */
  mcpServers: z
    .record(
      z.string().regex(/^[a-z][a-z0-9-]{0,30}$/, 'an MCP server name is lower-case letters, digits or -'),
      mcpServerSchema,
    )
    .default({}),
  /** Sessions discover MCP tools again after this long (at most 2 minutes while a server is down). */
  mcpRefreshAfter: durationSchema.default(15 * 60_000),
  /** Mission guardrails: runs per day, spacing, and failed runs in a row before a mission pauses itself. */
  missions: z
    .strictObject({
      maxRunsPerDay: z.number().int().min(1).max(10_000).default(48),
      cooldown: z.union([z.literal(0), durationSchema]).default(0),
      maxConsecutiveFailures: z.number().int().min(1).max(100).default(3),
    })
    .default({ maxRunsPerDay: 48, cooldown: 0, maxConsecutiveFailures: 3 }),
  /** How long a turn waits for a model API that is down (5xx, 429, timeouts) before it gives up. */
  modelOutageTimeout: durationSchema.pipe(z.number()).default(6 * 3_600_000),
  /** How long a credential gate (a "Connect <provider>" prompt) waits for the sign-in. */
  credentialTimeout: durationSchema.default(24 * 3_600_000),
  /** Slack assistant threads (SLACK_ASSISTANT=on) open with these suggestions; Slack shows at most four. */
  assistantPrompts: z
    .array(z.strictObject({ title: z.string().min(1).max(75), message: z.string().min(1).max(2_000) }))
    .max(4)
    .default([
      { title: 'What can you do?', message: 'What can you do, and what needs my approval?' },
      { title: 'What time is it?', message: 'What time is it in Asia/Tokyo?' },
    ]),
  /** US dollars per million tokens, by model name (the `MODEL` the worker calls): turns usage into cost. */
  prices: z
    .record(
      z.string().min(1).max(200),
      z.strictObject({
        input: z.number().min(0).max(10_000),
        output: z.number().min(0).max(10_000),
        /** Input read from the provider's prompt cache (absent: billed as input). */
        cachedInput: z.number().min(0).max(10_000).optional(),
      }),
    )
    .default({}),
  /**
   * Spending limits. When one is reached the turn waits at a budget gate ("continue with $5 more?") that the
   * person or an approver decides; a mission run pauses on it the same way.
   */
  budgets: z
    .strictObject({
      perTurn: limitSchema.optional(),
      perConversation: limitSchema.optional(),
      perPersonPerDay: limitSchema.optional(),
      perMissionRun: limitSchema.optional(),
      /** May the person who reached a limit approve more themselves? false: only an approver may. */
      selfApprove: z.boolean().default(true),
    })
    .default({ selfApprove: true }),
  /**
   * Link previews under the agent's answers, per chat platform: off by default, because a preview is the platform
   * fetching any address the model wrote, which would carry what a credentialed read returned out of the building.
   */
  linkPreviews: z
    .strictObject({ slack: z.boolean().default(false), discord: z.boolean().default(false) })
    .default({ slack: false, discord: false }),
});
export type PolicyFile = z.infer<typeof policyFileSchema>;

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value && value.trim() !== '' ? value.trim() : undefined));
/** TLS to Temporal beyond the system's roots: a client certificate (mTLS), and/or your own CA and server name. */
export interface TemporalTls {
  certPath?: string;
  keyPath?: string;
  caPath?: string;
  serverName?: string;
}

/** A comma-separated setting as its items. */
const list = (value: string | undefined) =>
  value
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean) ?? [];

/** Where the gateway serves the embedded Temporal UI. */
export const TEMPORAL_UI_PATH = '/temporal';
/**
 * The embedded UI's own port under TEMPORAL_UI=gateway: one of the Fetch standard's "bad ports", which every
 * browser refuses to load, so a DNS-rebinding page cannot reach the UI around the gateway's door.
 */
export const BROWSER_REFUSED_PORT = 6669;
/** The embedded dev server's HTTP API: also on a port browsers refuse (no browser may reach Temporal directly). */
export const BROWSER_REFUSED_HTTP_PORT = 6668;

const port = (fallback: number) => z.coerce.number().int().min(1).max(65_535).default(fallback);

/**
 * The Fetch standard's "bad ports" above 1024: every browser refuses to load them, so a page (DNS rebinding) can
 * never reach what listens there. The embedded server's UI and HTTP API answer any Host: they listen only on these.
 */
/** A deploy's drain on the embedded server (`npm start`): what one small host resumes beside people's clicks. */
export const EMBEDDED_DRAIN_RATE = 5;

export const BROWSER_REFUSED_PORTS = [
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697,
  10080,
] as const;

const envSchema = z.object({
  PORT: port(3000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  PUBLIC_URL: optionalText,
  TEMPORAL_ADDRESS: optionalText,
  TEMPORAL_NAMESPACE: z.string().default('default'),
  /** Temporal Cloud (or any server with API keys): implies TLS. */
  TEMPORAL_API_KEY: optionalText,
  /** mTLS: client certificate and key files (PEM); either turns TLS on. */
  TEMPORAL_TLS_CERT_PATH: optionalText,
  TEMPORAL_TLS_KEY_PATH: optionalText,
  /** A server certificate signed by your own CA (compose's mTLS): the CA's certificate, and the name it is for. */
  TEMPORAL_TLS_CA_PATH: optionalText,
  TEMPORAL_TLS_SERVER_NAME: optionalText,
  TEMPORAL_TLS: z.enum(['on', 'off']).optional(),
  TEMPORAL_TASK_QUEUE: z.string().default('agent'),
  TEMPORAL_DEPLOYMENT_NAME: optionalText,
  TEMPORAL_WORKER_VERSIONING: z.enum(['on', 'off']).default('on'),
  TEMPORAL_DEPLOY_PROMOTE: z.enum(['auto', 'manual']).default('auto'),
  TEMPORAL_CLI_PATH: optionalText,
  TEMPORAL_PORT: port(7233),
  /**
   * The embedded dev server's UI: `gateway` (default) serves it at PUBLIC_URL/temporal/ behind the chat's own
   * door (Host check, sign-in), from a loopback port browsers refuse to load; `direct` on its own port, answering
   * any Host (a DNS-rebinding page could read and signal everything); `off` starts the server headless.
   */
  TEMPORAL_UI: z.enum(['gateway', 'direct', 'off']).default('gateway'),
  /** The UI's own port. Under `gateway`, one the Fetch standard makes browsers refuse ("bad ports"). */
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65_535).optional(),
  TEMPORAL_UI_URL: optionalText,
  /**
   * A Temporal UI server the gateway serves at /temporal/ behind its own door (compose: http://temporal-ui:8080,
   * started with TEMPORAL_UI_PUBLIC_PATH=/temporal), for a server you run yourself.
   */
  TEMPORAL_UI_UPSTREAM: z.url({ protocol: /^https?$/ }).optional(),
  /** Under TEMPORAL_UI=gateway with several people (proxy or login mode): who may open it (it shows everything). */
  TEMPORAL_UI_USERS: optionalText,
  /** The embedded dev server's HTTP API port (it answers any Host: keep it one browsers refuse). */
  TEMPORAL_HTTP_PORT: port(BROWSER_REFUSED_HTTP_PORT),
  /**
   * Signs operator actions (`agentctl resolve`, `agentctl stop`); the worker accepts `operator: true` only with
   * its signature. Default: DATA_DIR/operator-key, created on first use (owner-only).
   */
  OPERATOR_KEY: optionalText.refine(
    (key) => key === undefined || key.length >= 32,
    'OPERATOR_KEY must be at least 32 characters',
  ),
  /**
   * Seals every signal a gateway sends in a person's name (infra/gateway-seal.ts); the worker believes a message,
   * decision or answer only with its seal. The same for every gateway and worker. Default: DATA_DIR/gateway-key,
   * created on first use (owner-only), which serves processes that share DATA_DIR.
   */
  GATEWAY_KEY: optionalText.refine(
    (key) => key === undefined || key.length >= 32,
    'GATEWAY_KEY must be at least 32 characters (openssl rand -base64 32)',
  ),
  MODEL_PROVIDER: z.enum(['scripted', 'openai', 'anthropic']).default('scripted'),
  /** The scripted model writes its answers word by word at this pace (0: at once), so the quick start streams. */
  SCRIPTED_WORD_MS: z.coerce.number().int().min(0).max(1_000).default(35),
  MODEL: optionalText,
  /**
   * Models tried in order when the one before has no capacity (429, 5xx, overloaded, timeouts), never after a
   * request error or a refusal: `provider:model`, comma-separated, e.g. `anthropic:claude-sonnet-4-5,openai:gpt-4.1`.
   */
  MODEL_FALLBACKS: optionalText,
  OPENAI_BASE_URL: z.string().default('https://api.openai.com/v1'),
  OPENAI_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: optionalText,
  ANTHROPIC_API_KEY: optionalText,
  AGENT_CONFIG: optionalText,
  APPROVERS: optionalText,
  WEB_TRUSTED_USER_HEADER: optionalText,
  /** Proxy mode: the header is believed only from these addresses (CIDRs or single addresses, comma-separated). */
  WEB_TRUSTED_PROXIES: optionalText,
  /** off: no web chat (page and API); the gateway serves Slack, Discord, sign-ins and health only. */
  WEB_CHAT: z.enum(['on', 'off']).default('on'),
  /** Sign-in mode: people sign in to the web chat with this OpenID Connect provider of the policy file. */
  WEB_LOGIN: optionalText,
  /** How long a web sign-in (the session cookie) lasts. */
  WEB_SESSION_TTL: durationSchema.pipe(z.number()).default(12 * 3_600_000),
  WEB_ALLOWED_USERS: optionalText,
  WEB_ALLOWED_DOMAINS: optionalText,
  WEB_ALLOWED_TENANTS: optionalText,
  WEB_ALLOWED_GROUPS: optionalText,
  WEB_ALLOW_ANY_ACCOUNT: z.enum(['true', 'false']).default('false'),
  /** Per person: messages per minute, and new conversations per minute (web API). */
  WEB_RATE_MESSAGES: z.coerce.number().int().min(1).max(100_000).default(30),
  WEB_RATE_SESSIONS: z.coerce.number().int().min(1).max(100_000).default(10),
  /** AG-UI front ends on other origins (comma-separated `https://app.example.com`) allowed by CORS; none unless set. */
  AGUI_ALLOWED_ORIGINS: optionalText,
  /** Hosts (patterns, CIDRs, host:port) an A2A push notification may reach though not public; plain http only to these. */
  A2A_PUSH_ALLOW_HOSTS: optionalText,
  SLACK_BOT_TOKEN: optionalText,
  /** E-mail as a channel of every gate: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://host:465. */
  SMTP_URL: optionalText,
  EMAIL_FROM: optionalText,
  /** How long a gate's e-mailed link works (it is single-use either way). */
  EMAIL_LINK_TTL: durationSchema.pipe(z.number()).default(3 * 24 * 3_600_000),
  /** The daily digest of "Needs you" by e-mail, at this hour (HH:MM, UTC); unset: none. */
  EMAIL_DIGEST: optionalText.pipe(
    z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'EMAIL_DIGEST is an hour of the day, HH:MM in UTC, e.g. 08:00')
      .optional(),
  ),
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_API_URL: optionalText,
  SLACK_APP_TOKEN: optionalText,
  /** on: the app has Slack's "Agents & AI Apps" turned on: assistant threads, suggested prompts, status. */
  SLACK_ASSISTANT: z.enum(['on', 'off']).default('off'),
  /** Streamed answers: the gateways' base URLs (comma-separated) that workers send partial text to. */
  STREAM_URL: optionalText,
  /** The secret workers present to gateways' /internal/stream (at least 16 characters; set on both). */
  STREAM_TOKEN: optionalText,
  /** Microsoft Teams: the bot's app (client) id and secret from its Azure Bot registration. */
  TEAMS_APP_ID: optionalText,
  TEAMS_APP_PASSWORD: optionalText,
  /** Single-tenant bots: the tenant id (tokens come from that tenant); unset: multi-tenant (botframework.com). */
  TEAMS_TENANT_ID: optionalText,
  /** Where the Bot Connector publishes its signing keys, and where the bot gets its tokens (tests point them home). */
  TEAMS_OPENID_METADATA: optionalText,
  TEAMS_TOKEN_URL: optionalText,
  DISCORD_BOT_TOKEN: optionalText,
  DISCORD_PUBLIC_KEY: optionalText,
  DISCORD_APPLICATION_ID: optionalText,
  DISCORD_API_URL: optionalText,
  DISCORD_GUILD_ID: optionalText,
  DISCORD_GATEWAY: z.enum(['on', 'off']).default('on'),
  VAULT_KEY: optionalText,
  PAYLOAD_KEY: optionalText,
  CODEC_AUTH_TOKEN: optionalText,
  AUDIT_AUTH_TOKEN: optionalText,
  CODEC_CORS_ORIGINS: optionalText,
  VAULT_PATH: optionalText,
  /** Shared state (the vault, OAuth flows, registered clients) in PostgreSQL instead of VAULT_PATH. */
  DATABASE_URL: optionalText.refine((url) => url === undefined || /^postgres(ql)?:\/\//.test(url), {
    message: 'must be a postgres:// or postgresql:// URL',
  }),
  WEB_AUTH_TOKEN: optionalText,
  WORKFLOW_BUNDLE_PATH: optionalText,
  /** Workflows a worker keeps in memory; more are evicted and replayed from history when they wake. */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
  WORKER_STICKY_TIMEOUT: durationSchema.pipe(z.number().min(100).max(60_000)).default(1_000),
  WORKER_DRAIN_INTERVAL: durationSchema.pipe(z.number().min(200).max(3_600_000)).default(30_000),
  /** A deploy's drain: workflows asked to move a second, server-paced (infra/temporal/drain-batch.ts). */
  /** Unset: 5 a second with the embedded server (one small host), 20 with a server of its own (docs/SCALING.md). */
  WORKER_DRAIN_RATE: z.coerce.number().int().min(1).max(10_000).optional(),
  /** The worker's Prometheus endpoint (`host:port`, served at /metrics): the SDK's metrics and the product's. */
  WORKER_METRICS_ADDRESS: optionalText.pipe(
    z
      .string()
      .regex(
        /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/,
        'WORKER_METRICS_ADDRESS is host:port, e.g. 0.0.0.0:9464',
      )
      .optional(),
  ),
  /** The gateway's Prometheus endpoint (`host:port`, served at /metrics): requests, decisions sent, inbox reads. */
  GATEWAY_METRICS_ADDRESS: optionalText.pipe(
    z
      .string()
      .regex(
        /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/,
        'GATEWAY_METRICS_ADDRESS is host:port, e.g. 0.0.0.0:9465',
      )
      .optional(),
  ),
  /** How often each gateway resumes conversations whose sign-in's own resume failed (gateways/oauth/resume-sweep.ts). */
  CREDENTIAL_SWEEP_INTERVAL: durationSchema.pipe(z.number().min(200).max(3_600_000)).default(30_000),
  /** Transcript chunks (infra/transcript-store) unused this long are dropped; a call naming one resends it. */
  TRANSCRIPT_CHUNK_RETENTION: durationSchema.pipe(z.number().min(3_600_000)).default(30 * 86_400_000),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalText,
  OTEL_SERVICE_NAME: optionalText,
});

export interface AppConfig {
  /** OpenTelemetry tracing: on when an OTLP traces URL is configured. */
  tracing: { tracesUrl: string | undefined; serviceName: string | undefined };
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  temporal: {
    address: string | undefined;
    namespace: string;
    /** API key for Temporal Cloud; never logged. */
    apiKey: string | undefined;
    /** TLS to the server: on (system roots), or mTLS with a client certificate. */
    tls: true | TemporalTls | undefined;
    taskQueue: string;
    /**
     * The Worker Deployment the worker joins (docs/VERSIONING.md): `TEMPORAL_DEPLOYMENT_NAME`, default the task
     * queue's name. Undefined when `TEMPORAL_WORKER_VERSIONING=off` (an unversioned worker).
     */
    deployment: { name: string; promote: 'auto' | 'manual' } | undefined;
    cliPath: string | undefined;
    devServerPort: number;
    /** The embedded dev server's UI: served through the gateway, on its own port, or not at all. */
    ui: 'gateway' | 'direct' | 'off';
    uiPort: number;
    /** The embedded dev server's HTTP API. */
    httpPort: number;
    uiUrl: string | undefined;
    /** Under `gateway` in proxy or login mode: the people who may open the UI. */
    uiUsers: string[];
    /** A UI server of your own the gateway serves at /temporal/ (else the embedded one, if any). */
    uiUpstream: string | undefined;
  };
  model: {
    provider: 'scripted' | 'openai' | 'anthropic';
    name: string | undefined;
    openaiBaseUrl: string;
    openaiApiKey: string | undefined;
    anthropicBaseUrl: string | undefined;
    anthropicApiKey: string | undefined;
    /** The scripted model's pace of writing, per word (0: whole answers at once). */
    scriptedWordMs: number;
    /** MODEL_FALLBACKS: tried in order when the model before has no capacity (activities/model/fallback.ts). */
    fallbacks: { provider: 'openai' | 'anthropic'; name: string }[];
  };
  web: {
    /** local: the per-install secret; login: OpenID Connect sign-in; proxy: a trusted reverse proxy's header. */
    mode: 'local' | 'login' | 'proxy';
    /** false: WEB_CHAT=off, no page and no web API. */
    enabled: boolean;
    trustedUserHeader: string | undefined;
    trustedProxies: string[];
    loginProvider: string | undefined;
    /** Sign-in mode: who may sign in (common/sign-in-rule.ts); `any` only with WEB_ALLOW_ANY_ACCOUNT=true. */
    admit: SignInRule;
    /** Local mode's secret when set explicitly (else DATA_DIR/web-token). */
    authToken: string | undefined;
    sessionTtlMs: number;
    rate: { messagesPerMinute: number; sessionsPerMinute: number };
    /** Origins of AG-UI front ends served elsewhere, allowed to call POST /api/agui (CORS); empty: same origin only. */
    aguiOrigins: string[];
    /** Non-public hosts A2A push notifications may reach (A2A_PUSH_ALLOW_HOSTS); public https ones need no entry. */
    a2aPushAllowHosts: string[];
  };
  /** Present when SMTP_URL is set: gates are mailed to the people who may decide them (policy users' `email`). */
  email: { smtpUrl: string; from: string; linkTtlMs: number; digestAt: string | undefined } | undefined;
  /** Present when SLACK_BOT_TOKEN is set; the gateway also needs SLACK_SIGNING_SECRET. */
  slack:
    | {
        botToken: string;
        signingSecret: string | undefined;
        apiUrl: string | undefined;
        appToken: string | undefined;
        /** SLACK_ASSISTANT=on: assistant threads get suggested prompts, a title and a working status. */
        assistant: boolean;
      }
    | undefined;
  /** Streamed answers (infra/stream-relay.ts): where workers send partial text, and the shared secret. */
  stream: { urls: string[]; token: string | undefined };
  /** Present when TEAMS_APP_ID is set (with TEAMS_APP_PASSWORD): the Teams channel at /teams/messages. */
  teams:
    | {
        appId: string;
        appPassword: string;
        tenantId: string | undefined;
        openIdMetadataUrl: string;
        tokenUrl: string;
      }
    | undefined;
  /** Present when DISCORD_BOT_TOKEN is set; HTTP interactions also need DISCORD_PUBLIC_KEY. */
  discord:
    | {
        botToken: string;
        publicKey: string | undefined;
        applicationId: string | undefined;
        /** REST base (default https://discord.com/api); tests point it at a local server. */
        apiUrl: string | undefined;
        /** Register slash commands in this guild only (instant) instead of globally. */
        guildId: string | undefined;
        /** Open the discord.js gateway connection for messages (mentions, DMs, threads). */
        gateway: boolean;
      }
    | undefined;
  credentials: {
    providers: Record<string, Provider>;
    /** The vault database (default DATA_DIR/vault.sqlite); gateway and worker must share it. */
    vaultPath: string;
    /** VAULT_KEY; without it a key file under DATA_DIR is generated and used. */
    vaultKey: string | undefined;
    /** DATABASE_URL: the vault lives in PostgreSQL (VAULT_PATH unused), shared by every gateway and worker. */
    databaseUrl: string | undefined;
  };
  /** Payload encryption (PAYLOAD_KEY) and the gateway's codec endpoint for the Temporal UI. */
  codec: { payloadKey: string | undefined; authToken: string | undefined; corsOrigins: string[] };
  /** The operator's audit export endpoint (`GET /operator/audit`): AUDIT_AUTH_TOKEN, or an operator's sign-in. */
  audit: { authToken: string | undefined };
  /** OPERATOR_KEY: the operator claims' key (infra/operator-claim.ts); else DATA_DIR/operator-key. */
  operatorKey: string | undefined;
  /** GATEWAY_KEY: the gateway seals' key (infra/gateway-seal.ts); else DATA_DIR/gateway-key. */
  gatewayKey: string | undefined;
  workflowBundlePath: string | undefined;
  /** Bounded workflow cache of a worker (unset: the SDK's default, sized from the heap limit). */
  maxCachedWorkflows: number | undefined;
  /**
   * How long a session's next workflow task waits for the worker that has it cached before any worker takes
   * it (replaying its history). Short: a crashed worker's sessions move on quickly; see docs/OPERATIONS.md.
   */
  stickyTimeoutMs: number;
  /** How often the current version's worker sweeps workflows pinned to other versions (workers/drain.ts). */
  drainIntervalMs: number;
  /** Signals a second a deploy's drain sends (WORKER_DRAIN_RATE). */
  drainRatePerSecond: number;
  /** Where the worker serves Prometheus metrics (WORKER_METRICS_ADDRESS), or undefined for none. */
  workerMetricsAddress: string | undefined;
  /** Where the gateway serves Prometheus metrics (GATEWAY_METRICS_ADDRESS), or undefined for none. */
  gatewayMetricsAddress: string | undefined;
  credentialSweepIntervalMs: number;
  /** How long an unused transcript chunk is kept in the worker's transcript store. */
  transcriptChunkRetentionMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  policy: PolicyFile;
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

function loadPolicyFile(explicitPath: string | undefined): PolicyFile {
  const file = explicitPath ?? (existsSync('agent.config.json') ? 'agent.config.json' : undefined);
  if (!file) return policyFileSchema.parse({});
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      `Cannot read the policy file ${file}: ${(cause as Error).message}. Fix the JSON or unset AGENT_CONFIG.`,
      { cause },
    );
  }
  const parsed = policyFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      `The policy file ${file} is invalid: ${formatIssues(parsed.error)}`,
    );
  }
  const unknown = unknownToolEntry(parsed.data);
  if (unknown)
    throw new AgentError(ErrorCode.ConfigInvalid, `The policy file ${file} is invalid: tools.${unknown}`);
  return parsed.data;
}

/**
 * Every `tools` entry must name a tool: a misspelled one (a deny that would never apply) stops the worker with its
 * name. MCP tools are `<server>__<tool>` of a configured server (whether the server offers the tool is checked
 * when it lists them, activities/mcp/pool.ts).
 */
function unknownToolEntry(policy: PolicyFile): string | undefined {
  for (const name of Object.keys(policy.tools)) {
    const entry = resolveTool(name);
    if (entry.kind === 'unknown' || entry.kind === 'mcp_refresh')
      return `${name} names no tool (built-ins: shell_execute, http_request, current_time, ask_user; missions: mission_<op>; MCP: <server>__<tool>)`;
    if (entry.kind === 'mcp' && !Object.hasOwn(policy.mcpServers, entry.server))
      return `${name} names the MCP server "${entry.server}", which is not under "mcpServers"`;
  }
  return undefined;
}

function webConfig(e: z.infer<typeof envSchema>, policy: PolicyFile): AppConfig['web'] {
  const fail = (message: string) => {
    throw new AgentError(ErrorCode.ConfigInvalid, message);
  };
  if (e.WEB_LOGIN && e.WEB_TRUSTED_USER_HEADER)
    fail('Set either WEB_LOGIN (sign-in) or WEB_TRUSTED_USER_HEADER (proxy), not both.');
  if (e.WEB_LOGIN && !policy.providers[e.WEB_LOGIN])
    fail(
      `WEB_LOGIN=${e.WEB_LOGIN} names no provider: declare it under "providers" in the policy file (an OpenID Connect provider with an "issuer").`,
    );
  const admit: SignInRule = {
    any: e.WEB_ALLOW_ANY_ACCOUNT === 'true',
    users: list(e.WEB_ALLOWED_USERS),
    domains: list(e.WEB_ALLOWED_DOMAINS).map((domain) => domain.toLowerCase().replace(/^@/, '')),
    tenants: list(e.WEB_ALLOWED_TENANTS),
    groups: list(e.WEB_ALLOWED_GROUPS),
  };
  if (e.WEB_LOGIN && !admitsAnyone(admit) && !namesSomeone(admit))
    fail(
      `WEB_LOGIN=${e.WEB_LOGIN} would let in every account the provider signs in. Name who may sign in: WEB_ALLOWED_USERS (subjects, verified emails or users-table names), WEB_ALLOWED_DOMAINS (verified email domains, Google's hd), WEB_ALLOWED_TENANTS (Entra ID tid) or WEB_ALLOWED_GROUPS (the groups claim); or, knowingly, WEB_ALLOW_ANY_ACCOUNT=true.`,
    );
  const trustedProxies =
    e.WEB_TRUSTED_PROXIES?.split(',')
      .map((p) => p.trim())
      .filter(Boolean) ?? [];
  if (e.WEB_TRUSTED_USER_HEADER && trustedProxies.length === 0)
    fail(
      'WEB_TRUSTED_USER_HEADER needs WEB_TRUSTED_PROXIES: the addresses (CIDRs) of your proxy, e.g. WEB_TRUSTED_PROXIES=10.0.0.5/32. The header is believed from nowhere else.',
    );
  return {
    mode: e.WEB_LOGIN ? 'login' : e.WEB_TRUSTED_USER_HEADER ? 'proxy' : 'local',
    enabled: e.WEB_CHAT === 'on',
    trustedUserHeader: e.WEB_TRUSTED_USER_HEADER?.toLowerCase(),
    trustedProxies,
    loginProvider: e.WEB_LOGIN,
    admit,
    authToken: e.WEB_AUTH_TOKEN,
    sessionTtlMs: e.WEB_SESSION_TTL,
    rate: { messagesPerMinute: e.WEB_RATE_MESSAGES, sessionsPerMinute: e.WEB_RATE_SESSIONS },
    aguiOrigins: aguiOrigins(e.AGUI_ALLOWED_ORIGINS),
    a2aPushAllowHosts: (e.A2A_PUSH_ALLOW_HOSTS ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  };
}

/** Each entry an origin exactly as a browser sends it (scheme, host, port; no path), or the start refuses it. */
function aguiOrigins(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      let url: URL | undefined;
      try {
        url = new URL(entry);
      } catch {
        url = undefined;
      }
      if (!url || !/^https?:$/.test(url.protocol) || url.origin !== entry.replace(/\/$/, '').toLowerCase())
        throw new AgentError(
          ErrorCode.ConfigInvalid,
          `AGUI_ALLOWED_ORIGINS: "${entry.slice(0, 100)}" is not an origin: write it as a browser sends it, e.g. https://app.example.com or http://localhost:5173 (no path, no wildcard)`,
        );
      return url.origin;
    });
}

function streamConfig(e: z.infer<typeof envSchema>): AppConfig['stream'] {
  const urls = (e.STREAM_URL ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  if (e.STREAM_TOKEN !== undefined && e.STREAM_TOKEN.length < 16)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'STREAM_TOKEN is too short: use at least 16 characters (e.g. `openssl rand -hex 24`).',
    );
  if (urls.length && !e.STREAM_TOKEN)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'STREAM_URL is set but STREAM_TOKEN is not: set the same STREAM_TOKEN on the workers and the gateways.',
    );
  for (const url of urls)
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw new AgentError(
        ErrorCode.ConfigInvalid,
        `STREAM_URL has "${url}", which is not an http(s) URL of a gateway.`,
      );
  return { urls, token: e.STREAM_TOKEN };
}

const DEFAULT_MODEL_NAMES = { scripted: 'scripted', openai: 'gpt-5-mini', anthropic: 'claude-sonnet-5' };

/** The model a provider is asked for: `MODEL`, or the provider's default. */
/**
 * MODEL_FALLBACKS (or, unset, the policy file's `modelFallbacks`) as `provider:model` entries, each with the key its
 * provider needs; anything else refused, naming where it was written.
 */
function modelFallbacks(e: Env, fromPolicy: readonly string[] | undefined): AppConfig['model']['fallbacks'] {
  const listed = e.MODEL_FALLBACKS ? e.MODEL_FALLBACKS.split(',') : (fromPolicy ?? []);
  const source = e.MODEL_FALLBACKS ? 'MODEL_FALLBACKS' : "the policy file's modelFallbacks";
  return listed
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^(openai|anthropic):(\S+)$/.exec(entry);
      if (!match)
        throw new AgentError(
          ErrorCode.ConfigInvalid,
          `${source} entry "${entry}" is not provider:model (provider openai or anthropic), e.g. anthropic:claude-sonnet-4-5`,
        );
      const provider = match[1] as 'openai' | 'anthropic';
      const key = provider === 'openai' ? e.OPENAI_API_KEY : e.ANTHROPIC_API_KEY;
      if (!key)
        throw new AgentError(
          ErrorCode.ConfigInvalid,
          `${source} names ${entry}, but ${provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY'} is not set`,
        );
      return { provider, name: match[2]! };
    });
}

export function modelNameOf(model: Pick<AppConfig['model'], 'provider' | 'name'>): string {
  return model.name ?? DEFAULT_MODEL_NAMES[model.provider];
}

/** The deployment's models as `provider:model`, the primary first, then MODEL_FALLBACKS: what a fork may choose. */
export function modelLabels(model: AppConfig['model']): string[] {
  return [{ provider: model.provider, name: modelNameOf(model) }, ...model.fallbacks].map(
    (m) => `${m.provider}:${m.name}`,
  );
}

type Env = z.infer<typeof envSchema>;

/** APPROVERS added to the policy's, then what no deployment could ever satisfy is refused with the fix. */
/** Ids (and names) that two `users` entries claim: one person could then approve as, or instead of, the other. */
function sharedIdentities(users: PolicyFile['users']): string[] {
  const owner = new Map<string, string>();
  const clashes: string[] = [];
  for (const name of Object.keys(users)) owner.set(name, name);
  for (const [name, entry] of Object.entries(users))
    for (const id of [
      ...entry.slack,
      ...entry.discord,
      ...(entry.teams ?? []).map((t) => `teams:${t.toLowerCase()}`),
    ]) {
      const other = owner.get(id);
      if (other !== undefined && other !== name) clashes.push(`"${id}" is both ${other}'s and ${name}'s`);
      else owner.set(id, name);
    }
  return clashes;
}

function checkPolicy(e: Env, policy: PolicyFile, model: Pick<AppConfig['model'], 'provider' | 'name'>): void {
  const envApprovers =
    e.APPROVERS?.split(',')
      .map((name) => name.trim())
      .filter(Boolean) ?? [];
  policy.approvers = [...new Set([...policy.approvers, ...envApprovers])];
  const shared = sharedIdentities(policy.users);
  if (shared.length)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      `The policy file's "users" give one id to two people, so one could act as the other: ${shared.join('; ')}. Each Slack, Discord and Teams id (and each name) must belong to one person.`,
    );
  const unsatisfiable = unsatisfiableApprovals(policy);
  if (unsatisfiable.length)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      `Nobody could ever approve some calls: ${unsatisfiable.join('; ')}.`,
    );
  const { budgets } = policy;
  const anyBudget =
    budgets.perTurn || budgets.perConversation || budgets.perPersonPerDay || budgets.perMissionRun;
  if (anyBudget && !budgets.selfApprove && policy.approvers.length === 0)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'The policy file\'s budgets have "selfApprove": false but no "approvers": nobody could ever continue past a limit. Add approvers (or APPROVERS), or allow self-approval.',
    );
  const dollarLimits = Object.entries(policy.budgets).filter(
    ([, limit]) => typeof limit === 'object' && limit.usd !== undefined,
  );
  if (dollarLimits.length && !policy.prices[modelNameOf(model)])
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      `The policy file's budgets ${dollarLimits.map(([name]) => name).join(', ')} are in dollars, but "prices" has no entry for the model "${modelNameOf(model)}": add "prices": { "${modelNameOf(model)}": { "input": <$ per million input tokens>, "output": <$ per million output tokens> } }, or give the limits in "tokens".`,
    );
}

function temporalConfig(e: Env): AppConfig['temporal'] {
  return {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    apiKey: e.TEMPORAL_API_KEY,
    tls:
      e.TEMPORAL_TLS === 'off'
        ? undefined
        : (e.TEMPORAL_TLS_CERT_PATH && e.TEMPORAL_TLS_KEY_PATH) || e.TEMPORAL_TLS_CA_PATH
          ? {
              ...(e.TEMPORAL_TLS_CERT_PATH && e.TEMPORAL_TLS_KEY_PATH
                ? { certPath: e.TEMPORAL_TLS_CERT_PATH, keyPath: e.TEMPORAL_TLS_KEY_PATH }
                : {}),
              ...(e.TEMPORAL_TLS_CA_PATH ? { caPath: e.TEMPORAL_TLS_CA_PATH } : {}),
              ...(e.TEMPORAL_TLS_SERVER_NAME ? { serverName: e.TEMPORAL_TLS_SERVER_NAME } : {}),
            }
          : e.TEMPORAL_TLS === 'on' || e.TEMPORAL_API_KEY
            ? true
            : undefined,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    deployment:
      e.TEMPORAL_WORKER_VERSIONING === 'off'
        ? undefined
        : { name: e.TEMPORAL_DEPLOYMENT_NAME ?? e.TEMPORAL_TASK_QUEUE, promote: e.TEMPORAL_DEPLOY_PROMOTE },
    cliPath: e.TEMPORAL_CLI_PATH,
    devServerPort: e.TEMPORAL_PORT,
    ui: e.TEMPORAL_UI,
    uiPort: e.TEMPORAL_UI_PORT ?? (e.TEMPORAL_UI === 'gateway' ? BROWSER_REFUSED_PORT : 8233),
    httpPort: e.TEMPORAL_HTTP_PORT,
    uiUrl:
      e.TEMPORAL_UI_URL ??
      ((e.TEMPORAL_ADDRESS && !e.TEMPORAL_UI_UPSTREAM) || e.TEMPORAL_UI === 'off'
        ? undefined
        : e.TEMPORAL_UI === 'gateway'
          ? `${(e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, '')}${TEMPORAL_UI_PATH}`
          : `http://localhost:${e.TEMPORAL_UI_PORT ?? 8233}`),
    uiUsers: list(e.TEMPORAL_UI_USERS),
    uiUpstream: e.TEMPORAL_UI === 'gateway' ? e.TEMPORAL_UI_UPSTREAM : undefined,
  };
}

function emailConfig(e: Env): AppConfig['email'] {
  if (!e.SMTP_URL) return undefined;
  let url: URL;
  try {
    url = new URL(e.SMTP_URL);
  } catch {
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'SMTP_URL is smtp://user:password@host:587 or smtps://host:465',
    );
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'SMTP_URL is smtp://user:password@host:587 or smtps://host:465',
    );
  const from = e.EMAIL_FROM ?? `agent@${url.hostname}`;
  if (!z.email().safeParse(from.replace(/^.*<([^>]+)>\s*$/, '$1')).success)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'EMAIL_FROM is an address, e.g. "Agent <agent@example.com>"',
    );
  return { smtpUrl: e.SMTP_URL, from, linkTtlMs: e.EMAIL_LINK_TTL, digestAt: e.EMAIL_DIGEST };
}

function teamsConfig(e: Env): AppConfig['teams'] {
  if (!e.TEAMS_APP_ID) return undefined;
  if (!e.TEAMS_APP_PASSWORD)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'TEAMS_APP_PASSWORD is missing: the client secret of the Azure Bot registration whose app id is TEAMS_APP_ID (or unset TEAMS_APP_ID to turn Teams off)',
    );
  const tenant = e.TEAMS_TENANT_ID ?? 'botframework.com';
  return {
    appId: e.TEAMS_APP_ID,
    appPassword: e.TEAMS_APP_PASSWORD,
    tenantId: e.TEAMS_TENANT_ID,
    openIdMetadataUrl:
      e.TEAMS_OPENID_METADATA ?? 'https://login.botframework.com/v1/.well-known/openidconfiguration',
    tokenUrl: e.TEAMS_TOKEN_URL ?? `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
  };
}

function slackConfig(e: Env): AppConfig['slack'] {
  if (!e.SLACK_BOT_TOKEN) return undefined;
  return {
    botToken: e.SLACK_BOT_TOKEN,
    signingSecret: e.SLACK_SIGNING_SECRET,
    apiUrl: e.SLACK_API_URL,
    appToken: e.SLACK_APP_TOKEN,
    assistant: e.SLACK_ASSISTANT === 'on',
  };
}

function discordConfig(e: Env): AppConfig['discord'] {
  if (!e.DISCORD_BOT_TOKEN) return undefined;
  return {
    botToken: e.DISCORD_BOT_TOKEN,
    publicKey: e.DISCORD_PUBLIC_KEY,
    applicationId: e.DISCORD_APPLICATION_ID,
    apiUrl: e.DISCORD_API_URL,
    guildId: e.DISCORD_GUILD_ID,
    gateway: e.DISCORD_GATEWAY === 'on',
  };
}

function credentialsConfig(e: Env, policy: PolicyFile, env: NodeJS.ProcessEnv): AppConfig['credentials'] {
  let providers: AppConfig['credentials']['providers'];
  try {
    const configured = resolveProviders(policy.providers, env);
    providers = { ...configured, ...resolveMcpProviders(policy.mcpServers, env, configured) };
  } catch (cause) {
    throw new AgentError(ErrorCode.ConfigInvalid, `Credential providers: ${(cause as Error).message}`, {
      cause,
    });
  }
  return {
    providers,
    vaultPath: path.resolve(e.VAULT_PATH ?? path.join(e.DATA_DIR, 'vault.sqlite')),
    vaultKey: e.VAULT_KEY,
    databaseUrl: e.DATABASE_URL,
  };
}

function codecConfig(e: Env): AppConfig['codec'] {
  return {
    payloadKey: e.PAYLOAD_KEY,
    authToken: e.CODEC_AUTH_TOKEN,
    corsOrigins: (
      e.CODEC_CORS_ORIGINS ??
      (e.TEMPORAL_UI === 'direct' ? `http://localhost:${e.TEMPORAL_UI_PORT ?? 8233}` : '')
    )
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  };
}

/**
 * The embedded dev server's UI (behind the gateway) and HTTP API take signals from whoever reaches them, under any
 * Host: on an ordinary port a web page could reach them by DNS rebinding and decide a person's gate. Refused.
 */
function refuseBrowserReachablePorts(e: Env): void {
  if (e.TEMPORAL_ADDRESS) return; // not the embedded server
  const refused = new Set<number>(BROWSER_REFUSED_PORTS);
  const wrong = [
    ...(refused.has(e.TEMPORAL_HTTP_PORT) ? [] : [`TEMPORAL_HTTP_PORT=${e.TEMPORAL_HTTP_PORT}`]),
    ...(e.TEMPORAL_UI === 'gateway' && e.TEMPORAL_UI_PORT !== undefined && !refused.has(e.TEMPORAL_UI_PORT)
      ? [`TEMPORAL_UI_PORT=${e.TEMPORAL_UI_PORT}`]
      : []),
  ];
  if (wrong.length)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      `${wrong.join(' and ')}: the embedded Temporal server answers any web page there (it checks no Host), so a page could decide people's gates. Use a port every browser refuses (${BROWSER_REFUSED_PORTS.join(', ')}), or leave it unset; the UI is served at ${TEMPORAL_UI_PATH}/ behind the gateway's sign-in.`,
    );
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new AgentError(ErrorCode.ConfigInvalid, `Invalid environment: ${formatIssues(parsed.error)}`);
  }
  const e = parsed.data;
  refuseBrowserReachablePorts(e);
  if (e.DATABASE_URL && !e.VAULT_KEY)
    throw new AgentError(
      ErrorCode.ConfigInvalid,
      'DATABASE_URL is set but VAULT_KEY is not: every gateway and worker must encrypt the shared vault with the same key, so set VAULT_KEY on all of them (e.g. `openssl rand -base64 32`).',
    );
  const policy = loadPolicyFile(e.AGENT_CONFIG);
  const model = { provider: e.MODEL_PROVIDER, name: e.MODEL };
  checkPolicy(e, policy, model);
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    publicUrl: e.PUBLIC_URL ?? `http://localhost:${e.PORT}`,
    tracing: {
      // As the OTLP specification says: a signal-specific URL is used as is, the base gets /v1/traces.
      tracesUrl:
        e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
        (e.OTEL_EXPORTER_OTLP_ENDPOINT && `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`),
      serviceName: e.OTEL_SERVICE_NAME,
    },
    temporal: temporalConfig(e),
    model: {
      provider: e.MODEL_PROVIDER,
      name: e.MODEL,
      openaiBaseUrl: e.OPENAI_BASE_URL,
      openaiApiKey: e.OPENAI_API_KEY,
      anthropicBaseUrl: e.ANTHROPIC_BASE_URL,
      anthropicApiKey: e.ANTHROPIC_API_KEY,
      scriptedWordMs: e.SCRIPTED_WORD_MS,
      fallbacks: modelFallbacks(e, policy.modelFallbacks),
    },
    web: webConfig(e, policy),
    stream: streamConfig(e),
    slack: slackConfig(e),
    email: emailConfig(e),
    teams: teamsConfig(e),
    discord: discordConfig(e),
    credentials: credentialsConfig(e, policy, env),
    codec: codecConfig(e),
    audit: { authToken: e.AUDIT_AUTH_TOKEN },
    operatorKey: e.OPERATOR_KEY,
    gatewayKey: e.GATEWAY_KEY,
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    stickyTimeoutMs: e.WORKER_STICKY_TIMEOUT,
    drainIntervalMs: e.WORKER_DRAIN_INTERVAL,
    // The embedded server shares its host's cores with the worker and the gateway: at 20 a second with 10,000
    // parked, clicks during a drain waited past 30 s; at 10, 1.9 s at p99; at 5, 259 ms (docs/BENCHMARKS.md).
    drainRatePerSecond: e.WORKER_DRAIN_RATE ?? (e.TEMPORAL_ADDRESS ? 20 : EMBEDDED_DRAIN_RATE),
    workerMetricsAddress: e.WORKER_METRICS_ADDRESS,
    gatewayMetricsAddress: e.GATEWAY_METRICS_ADDRESS,
    credentialSweepIntervalMs: e.CREDENTIAL_SWEEP_INTERVAL,
    transcriptChunkRetentionMs: e.TRANSCRIPT_CHUNK_RETENTION,
    logLevel: e.LOG_LEVEL,
    policy,
  };
}

/**
 * Every side effect of a session: model calls, the policy check (reads configuration and grants), tool
 * runs (a side effect at most once: the workflow history is the ledger) and grant storage. Created once
 * per worker with its dependencies.
 */
import { asPeople } from '../common/identities';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import {
  loadOperatorKey,
  verifyOperatorClaim,
  type ClaimVerdict,
  type OperatorAction,
  type OperatorClaim,
} from '../infra/operator-claim';
import {
  FORWARDED_SIGNALS,
  loadGatewayKey,
  originMac,
  sealSignal,
  verifiedVia,
  verifySeal,
  type GatewaySeal,
  type SealedSignal,
  type SealVerdict,
} from '../infra/gateway-seal';
import type { Client } from '@temporalio/client';
import { a2aPusher } from './a2a-push';
import { countToolRun } from './metrics';
import { digestMailer, gateMailer } from './gate-mail';
import { auditRecorder } from './audit';
import { toolSpan } from './genai-spans';
import type { AppConfig } from '../infra/config';
import type { Grant } from '../common/grants';
import type { Message } from '../workflows/session/contract';
import type { DeliveryRequest, DeliveryResult } from '../workflows/session/outbound';
import { CredentialService } from '../infra/credentials/service';
import { createDeliver, createOutbounds } from './deliver';
import { MissionTools, nextCronTime } from './missions';
import { missionDirectoryActivities } from './mission-directories';
import type { McpDiscovery } from '../common/tools/mcp';
import { McpPool } from './mcp/pool';
import { UserGrants } from './grants';
import { recordSpend, type SpendRequest } from './spend';
import type { DaySpend } from '../common/budgets';
import { OPTIONAL_SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { createLogger } from '../infra/log';
import { httpStreamSink, type StreamSink } from '../infra/stream-relay';
import { previousRunTranscript } from './previous-run';
import { requestOverheadTokens } from './model';
import { modelActivities } from './model-activities';
import { createToolCalls } from './tool-calls';
import type { SandboxStatus } from './tools/sandbox';
import { probeSandbox } from './tools/sandbox-probe';
import type {
  RunOpening,
  SessionSettings,
  ToolPlan,
  ToolPlanRequest,
  ToolRunRequest,
  ToolRunResult,
} from './types';

export interface ActivityDeps {
  config: AppConfig;
  client: Client;
  /** MCP connections; the worker passes its own so it can close them (and their processes) on shutdown. */
  mcp?: McpPool;
  /** The vault and providers, opened on first use (shared with `mcp`). */
  credentials?: () => CredentialService;
  /** shell_execute's sandbox as probed at worker start; without it, probed on first use. */
  sandbox?: Promise<SandboxStatus>;
  /** Where streamed answers' partial text goes; without it, STREAM_URL's gateways (if set). */
  stream?: StreamSink;
}

/**
 * Which of the newer, optional search attributes the namespace has (AgentTokens, AgentCostUsd, AgentFeedback):
 * a workflow upserting one the server does not know fails its task, so it sets only these. Asked at most
 * every five minutes, so an operator's late registration is picked up without a restart.
 */
function optionalAttributesOf(client: Client, namespace: string): () => Promise<string[]> {
  let cached: { at: number; names: string[] } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < 5 * 60_000) return cached.names;
    const listed = await client.connection.operatorService.listSearchAttributes({ namespace });
    const names = OPTIONAL_SEARCH_ATTRIBUTES.filter((name) =>
      Object.hasOwn(listed.customAttributes ?? {}, name),
    );
    cached = { at: Date.now(), names };
    return names;
  };
}

/** Budgets reach the workflow only when a limit is set (settings are recorded in every turn's history). */
function hasBudgets(budgets: AppConfig['policy']['budgets']): boolean {
  return !!(budgets.perTurn || budgets.perConversation || budgets.perPersonPerDay || budgets.perMissionRun);
}

/** How long a run's opening waits for the settings before leaving them to the first turn. */
const OPENING_SETTINGS_MS = 5_000;

/** `work`, or a rejection once `ms` have passed without it. */
async function withinMs<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The settings a session reads for its turns (settings.ts in the workflow): the policy as this worker has it. */
function settingsReader(
  config: AppConfig,
  registeredAttributes: () => Promise<string[]>,
  mcp: McpPool,
): () => Promise<SessionSettings> {
  // The approvers as people (common/identities.ts): budget and question gates count them once by any of their ids.
  const approvers = asPeople(config.policy.approvers, config.policy.users);
  return async () => ({
    maxSteps: config.policy.maxSteps,
    continueAsNewAfterEvents: config.policy.continueAsNewAfterEvents,
    approvers: approvers.ids,
    ...(Object.keys(approvers.people).length ? { people: approvers.people } : {}),
    questionTimeoutMs: config.policy.questionTimeout,
    ...(config.policy.reminderAfter === 'never' ? {} : { reminderAfterMs: config.policy.reminderAfter }),
    credentialTimeoutMs: config.policy.credentialTimeout,
    modelOutageTimeoutMs: config.policy.modelOutageTimeout,
    ...(config.policy.contextTokens ? { contextTokens: config.policy.contextTokens } : {}),
    requestOverheadTokens: requestOverheadTokens(config),
    ...(hasBudgets(config.policy.budgets) ? { budgets: config.policy.budgets } : {}),
    ...(config.email ? { email: true } : {}),
    ...(await registeredAttributes().then(
      (names) => ({ optionalSearchAttributes: names }),
      () => ({}),
    )),
    ...(mcp.configured.length
      ? { mcpServers: mcp.configured, mcpRefreshAfterMs: config.policy.mcpRefreshAfter }
      : {}),
  });
}

export function createActivities(deps: ActivityDeps) {
  const { config, client } = deps;
  const log = createLogger('activities', config.logLevel);
  const registeredAttributes = optionalAttributesOf(client, config.temporal.namespace);
  const { urls: streamUrls, token: streamToken } = config.stream;
  const streamLog = createLogger('stream', config.logLevel);
  const stream =
    deps.stream ??
    (streamUrls.length && streamToken ? httpStreamSink(streamUrls, streamToken, streamLog) : undefined);
  const userGrants = new UserGrants(client, config.temporal.taskQueue);
  const outboundFor = createOutbounds(config, (message, fields) => streamLog.warn(message, fields));
  const deliverToPlatform = createDeliver(outboundFor);
  let sealKey: string | undefined;
  const gatewayKey = () => (sealKey ??= loadGatewayKey(config.dataDir, config.gatewayKey));
  // Mission changes are sealed as a gateway seals a person's signals: the mission believes (and records in the
  // person's name) only those, whoever else reaches Temporal.
  const missions = new MissionTools(client, config, gatewayKey);
  const mcp =
    deps.mcp ??
    new McpPool(config.policy.mcpServers, () => credentials(), {
      isolation: { workdirsDir: path.join(config.dataDir, 'workdirs') },
    });
  // Opened on first use, so workers without credential tools never create a vault or key file.
  let credentialService: CredentialService | undefined;
  const credentials =
    deps.credentials ?? (() => (credentialService ??= CredentialService.fromConfig(config)));
  const toolCalls = createToolCalls({
    config,
    mcp,
    missions,
    userGrants,
    credentials,
    sandbox: () => deps.sandbox ?? probeSandbox(config.policy.sandbox),
  });

  const readSettings = settingsReader(config, registeredAttributes, mcp);
  const readPreviousTranscript = async (): Promise<Message[]> => {
    const workflowId = Context.current().info.workflowExecution?.workflowId;
    return workflowId ? await previousRunTranscript(client, workflowId) : [];
  };

  let key: string | undefined;
  const operatorKey = () => (key ??= loadOperatorKey(config.dataDir, config.operatorKey));
  return {
    ...modelActivities({ config, log, streamLog, stream, outboundFor }),

    /** A2A push notifications of a conversation's tasks (workflows/session/a2a-push.ts). */
    pushA2aTasks: a2aPusher({ config, client, credentials, log }),
    /** Gates e-mailed to the people who may decide them (workflows/session/gate-mail.ts). */
    mailGates: gateMailer({ config, credentials, log }),
    /** A settled gate's audit record, written as a log line (workflows/session/gate-audit.ts). */
    recordAudit: auditRecorder({ log }),
    /** The daily "Needs you" digest by e-mail (workflows/email/digest.ts). */
    mailDigests: digestMailer({ config, client, credentials, log }),

    async loadSettings(): Promise<SessionSettings> {
      return await readSettings();
    },

    /** Adds a model call's usage (or a daily allowance) to the person's day; returns the day's total. */
    async recordSpend(request: SpendRequest): Promise<DaySpend> {
      return await recordSpend(client, config.temporal.taskQueue, config.policy.users, request);
    },

    async planToolCall(request: ToolPlanRequest): Promise<ToolPlan> {
      return await toolCalls.plan(request);
    },

    async runTool(request: ToolRunRequest): Promise<ToolRunResult> {
      const result = await toolSpan(
        { toolName: request.toolName, callId: request.idempotencyKey, conversationId: request.sessionId },
        () => toolCalls.run(request),
      );
      countToolRun(request.toolName, result.status);
      return result;
    },

    /**
     * Both reads a new run makes before its first turn, in one activity: one workflow task and one activity
     * fewer per new conversation. Settings that cannot be read, or not within OPENING_SETTINGS_MS, are left out
     * (the turn reads them itself, and says so if that fails), so they never cost the transcript its read.
     */
    async loadRunOpening(): Promise<RunOpening> {
      const [previousTranscript, settings] = await Promise.all([
        readPreviousTranscript(),
        withinMs(readSettings(), OPENING_SETTINGS_MS).catch((error: unknown) => {
          log.warn('settings left out of the run opening; the first turn reads them', {
            error: error instanceof Error ? error.message : String(error),
          });
          return undefined;
        }),
      ]);
      return { previousTranscript, ...(settings ? { settings } : {}) };
    },

    async deliver(request: DeliveryRequest): Promise<DeliveryResult> {
      return await deliverToPlatform(request);
    },

    /** The tools of every configured MCP server for this person; servers that are down are reported. */
    async discoverMcpTools(request: { userId: string }): Promise<McpDiscovery> {
      return await mcp.discover(request.userId);
    },

    async nextFireTime(request: {
      expression: string;
      timezone: string;
      after: number;
    }): Promise<number | null> {
      return nextCronTime(request.expression, request.timezone, request.after);
    },

    /** Which of the optional search attributes the namespace has (a mission sets AgentSharedMission only then). */
    async registeredSearchAttributes(): Promise<string[]> {
      return await registeredAttributes();
    },

    ...missionDirectoryActivities(client, config.temporal.taskQueue),

    /** Whether a workflow has ended (a mission asks about a run that never told it its end: terminated). */
    async workflowEnded(request: { workflowId: string }): Promise<{ ended: boolean; status: string }> {
      const { status } = await client.workflow.getHandle(request.workflowId).describe();
      return { ended: status.name !== 'RUNNING', status: status.name };
    },

    async saveUserGrant(grant: Grant): Promise<void> {
      await userGrants.add(grant);
    },

    /** Is this `operator: true` action signed with the operator key? Only the worker holds the key. */
    async verifyOperatorAction(request: {
      action: OperatorAction;
      claim: OperatorClaim | undefined;
    }): Promise<ClaimVerdict> {
      return verifyOperatorClaim(operatorKey(), request.action, request.claim);
    },

    /**
     * Were these signals sealed by a gateway, for the calling workflow (its id is the address a seal names)? Only
     * gateways and workers hold the key. One verdict per item, in order.
     */
    async verifyGatewaySeals(request: {
      items: {
        signal: string;
        digest: string;
        seal: GatewaySeal;
        origin?: { via?: unknown; mac?: unknown };
      }[];
    }): Promise<SealVerdict[]> {
      const to = Context.current().info.workflowExecution?.workflowId;
      return request.items.map((item) => {
        if (!to) return { ok: false, reason: 'it was not checked for a workflow' };
        const verdict = verifySeal(gatewayKey(), { signal: item.signal, to, digest: item.digest }, item.seal);
        // The place told with it counts only when its own MAC binds it to this seal.
        const via = verdict.ok ? verifiedVia(gatewayKey(), item.seal, item.origin) : undefined;
        return via ? { ok: true, via } : verdict;
      });
    },

    /**
     * A conversation passes a checked decision on to the mission run whose gate it shows: sealed afresh for that
     * run, as the run believes only sealed signals. Only for sealed signal names.
     */
    async sealForRun(request: {
      signal: string;
      to: string;
      digest: string;
      via?: string;
    }): Promise<GatewaySeal & { originMac?: string }> {
      if (!FORWARDED_SIGNALS.includes(request.signal as SealedSignal))
        throw new Error(`${request.signal} is not a signal a conversation passes on`);
      const { via, ...call } = request;
      const seal = sealSignal(gatewayKey(), call);
      return via ? { ...seal, originMac: originMac(gatewayKey(), seal.mac, via) } : seal;
    },
  };
}

/**
 * The contract between gateways and the session workflow: signal and query definitions plus the zod
 * schemas of their payloads. Gateways parse with these very schemas before signalling.
 *
 * Clicks and messages are signals, not updates: the Temporal server accepts a signal while every worker
 * is down, so a gateway can acknowledge within a platform's 3-second limit at any time. The workflow
 * answers the clicker afterwards, through the gate's new state and a notice.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import { providerNameSchema } from '../../common/ids';
import { DECISION_SURFACES, type DecidedVia, type DecisionSurface } from '../../common/chat-ids';
import { sharedSchemas } from '../../common/shared-schemas';
import { grantScopeSchema, type Grant } from '../../common/grants';
import { answerSchema, type Answer, type AskUserResult, type Question } from '../../common/tools/ask-user';
import type { ElicitField } from '../../common/tools/elicitation';
import type { SessionStatus } from '../../common/search-attributes';
import type { Continued, Spend } from '../../common/budgets';

/** Answers to a question gate: a whole form, or one question at a time (built inside `schemas`, once per worker). */
function answerPayloads(userId: z.ZodString) {
  /** A submitted form: answers to a question gate, validated against its questions by the workflow. */
  const answerSubmission = z.strictObject({
    gateId: z.string().min(1).max(64),
    userId,
    answers: z.array(answerSchema).max(5),
  });

  /**
   * One question answered at a time (a Discord select menu fires per question). The workflow keeps the
   * person's drafts on the gate and submits them as one answer once every question has one, or on `submit`.
   */
  const answerDraft = z.strictObject({
    gateId: z.string().min(1).max(64),
    userId,
    answers: z.array(answerSchema).max(5).default([]),
    /** Typed answers by question index: a number, an option's label, or free text where allowed. */
    texts: z
      .array(
        z.strictObject({ index: z.number().int().min(0).max(4), text: z.string().trim().min(1).max(2_000) }),
      )
      .max(5)
      .default([]),
    /** Options picked in a question's menu, by question index. */
    picks: z
      .array(
        z.strictObject({
          index: z.number().int().min(0).max(4),
          selected: z.array(z.string().max(100)).max(25),
        }),
      )
      .max(5)
      .default([]),
    submit: z.boolean().default(false),
  });
  return { answerSubmission, answerDraft };
}

/** The payload schemas, built once per worker (common/shared-schemas.ts). */
const schemas = sharedSchemas('session-contract', () => {
  const userId = z.string().min(1).max(128);

  const userMessage = z.strictObject({
    messageId: z.string().min(1).max(128),
    userId,
    text: z.string().min(1).max(20_000),
    /** The platform's reference of the message (Slack `ts`), for the "working" sign. */
    ref: z.string().max(100).optional(),
  });

  const decisionChoice = z.enum(['approve', 'deny', 'always', 'edit', 'delegate']);
  /** An operator's signature of one action (infra/operator-claim.ts): no secret, only a MAC and its time. */
  const operatorClaim = z.strictObject({ issuedAt: z.number(), mac: z.string().min(1).max(128) });

  const decision = z.strictObject({
    gateId: z.string().min(1).max(64),
    choice: decisionChoice,
    userId,
    /** Deny: told to the model. */
    reason: z.string().max(2_000).optional(),
    /** Edit & approve: the corrected arguments, validated against the tool's schema by the workflow. */
    args: z.record(z.string(), z.unknown()).optional(),
    /** Always allow: in this conversation (`session`) or everywhere for this user (`user`). */
    scope: grantScopeSchema.optional(),
    /**
     * Set by `agentctl resolve`: an operator decides in place of the requester; `userId` is then the operator's
     * name, recorded as "operator:<name>". Believed only with `claim`, agentctl's signature with the operator key
     * (infra/operator-claim.ts), which the worker checks.
     */
    operator: z.literal(true).optional(),
    claim: operatorClaim.optional(),
    /** Always allow: limit the grant to subjects matching this glob, e.g. `git status*`. */
    pattern: z.string().min(1).max(500).optional(),
    /** Delegate: the person this decision is handed to, who may then decide it too. */
    to: userId.optional(),
  });

  /** What a button carries: the address of its workflow and gate, and the choice. Nothing secret. */
  const gateButtonValue = z.strictObject({
    workflowId: z.string().min(1).max(300),
    gateId: z.string().min(1).max(64),
    choice: decisionChoice,
  });

  const revokeGrant = z.strictObject({ grantId: z.string().min(1).max(64), userId });

  /** "pending": who asks for the open gates again. */
  const repostPending = z.strictObject({ userId });

  /**
   * Stop: who asks to stop the running turn (its requester or an approver may). `operator` is set by
   * `agentctl stop` (anyone with access to the Temporal namespace), recorded as "operator:<name>".
   */
  const stop = z.strictObject({
    userId,
    operator: z.literal(true).optional(),
    claim: operatorClaim.optional(),
  });

  /** A person's rating of one of the agent's answers (Slack's feedback buttons). */
  const feedback = z.strictObject({
    messageId: z.string().min(1).max(128),
    userId,
    rating: z.enum(['good', 'bad']),
  });

  /** Sent by the gateway after a successful sign-in or key entry: ids only, never the secret. */
  const credentialProvided = z.strictObject({ provider: providerNameSchema, userId });

  /** Archive (or bring back) a conversation in its owner's list: only the owner may; nothing else changes. */
  const archive = z.strictObject({ userId, archived: z.boolean() });
  /** While a provider's retry-after holds the turn: try the models now (the fallbacks too) instead of waiting. */
  const tryModelNow = z.strictObject({ userId });
  /** `<contextId>.<messageId>`, as gateways/a2a/tasks.ts makes it. */
  const a2aPush = z.strictObject({ taskId: z.string().regex(/^[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{1,64}$/) });
  /** A gateway's seal of a signal in a person's name (infra/gateway-seal.ts): a MAC and its time, no secret. */
  const gatewaySeal = z.strictObject({ issuedAt: z.number(), mac: z.string().min(1).max(128) });
  /** Where a decision or an answer was made (signalOriginSchema below). Not strict: a later field is ignored. */
  const signalOrigin = z.object({ via: z.enum(DECISION_SURFACES), mac: z.string().min(1).max(128) });
  return {
    archive,
    gatewaySeal,
    signalOrigin,
    userMessage,
    decisionChoice,
    decision,
    gateButtonValue,
    ...answerPayloads(userId),
    revokeGrant,
    repostPending,
    stop,
    feedback,
    credentialProvided,
    tryModelNow,
    a2aPush,
  };
});

export const userMessageSchema = schemas.userMessage;
export type UserMessage = z.infer<typeof userMessageSchema>;
export const decisionChoiceSchema = schemas.decisionChoice;
export const decisionSchema = schemas.decision;
export type Decision = z.infer<typeof decisionSchema>;
export const gateButtonValueSchema = schemas.gateButtonValue;
export type GateButtonValue = z.infer<typeof gateButtonValueSchema>;
export const answerSubmissionSchema = schemas.answerSubmission;
export type AnswerSubmission = z.infer<typeof answerSubmissionSchema>;
export const answerDraftSchema = schemas.answerDraft;
export type AnswerDraft = z.input<typeof answerDraftSchema>;
/** A draft as the workflow reads it (defaults filled in). */
export type ReadAnswerDraft = z.output<typeof answerDraftSchema>;
export const revokeGrantSchema = schemas.revokeGrant;
export type RevokeGrant = z.infer<typeof revokeGrantSchema>;

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed JSON arguments, or the raw text when the model sent something unparsable. */
  args: unknown;
  /** Set (to their length) when the arguments exceeded MAX_TOOL_ARGS_CHARS: `args` is then empty. */
  argsTooLarge?: number;
}

export type ToolResultStatus = 'ok' | 'error' | 'denied' | 'expired' | 'superseded' | 'failed' | 'cancelled';

export type Message =
  | { role: 'user'; id: string; userId: string; text: string; at: number }
  | {
      role: 'assistant';
      id: string;
      text: string;
      toolCalls: ToolCall[];
      at: number;
      synthetic?: boolean;
      /** A summary the runtime had the model write of every message up to `throughId` (context-window.ts). */
      summary?: { throughId: string };
      /** The chat message this text was streamed into while written (Slack ts, Discord id): replaced by it. */
      streamRef?: string;
      /** People's ratings of this answer, one per person (the latest counts). */
      feedback?: { by: string; rating: 'good' | 'bad'; at: number }[];
      /** What the model had written when Stop cut it off (the text ends "(stopped)"; the chat message already shows it). */
      stopped?: boolean;
      /** `provider:model` that wrote it (absent before fallbacks existed): a fallback of MODEL_FALLBACKS shows here. */
      model?: string;
    }
  | {
      role: 'tool';
      id: string;
      toolCallId: string;
      name: string;
      status: ToolResultStatus;
      content: string;
      at: number;
      /** Made by the runtime (an interrupted call's result), not by running the tool. */
      synthetic?: boolean;
    };

/** The details of a model call's cancellation by Stop: what had been written by then (activities/model/streaming.ts). */
export interface StoppedWriting {
  written: string;
}

export type GateStatus = 'pending' | 'resolved' | 'expired' | 'cancelled';
export type GateOutcome =
  | 'approved'
  | 'edited'
  | 'always'
  | 'denied'
  | 'answered'
  | 'connected'
  | 'expired'
  | 'superseded'
  | 'stopped'
  | 'cancelled';

export interface GateResolution {
  outcome: GateOutcome;
  by: string;
  at: number;
  /** Where `by` decided, as the gateway told it (absent: read from the id). */
  via?: DecidedVia;
  reason?: string;
  /** Edit & approve: the arguments that will run. */
  args?: Record<string, unknown>;
  grant?: Grant;
  /** Question gates: the validated answers. */
  answers?: AskUserResult['answers'];
}

/** What every gate records, whatever it waits for. */
interface GateBase {
  id: string;
  toolCallId: string;
  /** Who asked (the person whose message started the turn); they may deny, and approve unless `selfApprove` is false. */
  requesterId: string;
  /** Configured approvers, who may decide too. */
  approvers: string[];
  /**
   * Ids that are one person (the policy's `users`: web, Slack, Discord, Teams ids) to that person's name: quorum,
   * four-eyes and "already approved" count people, not ids. Absent on gates opened before: each id is a person.
   */
  people?: Record<string, string>;
  createdAt: number;
  expiresAt: number | null;
  status: GateStatus;
  resolution?: GateResolution;
  /** Platform references of every posted prompt of this gate (edited when it is decided). */
  posts?: string[];
  /** Replies typed in the conversation that went to this gate ("approve", "deny …", "2"): shown as typed. */
  typed?: TypedReply[];
  /** Hand-overs ("delegate"): who handed the decision to whom, when; each `to` was added to `approvers`. */
  delegations?: Delegation[];
  /**
   * A gate of a mission run shown in this conversation: decisions on it are forwarded to that run's
   * workflow, which decides; the mission reports the outcome back.
   */
  remote?: { workflowId: string; missionName: string };
}

/** A message typed to a gate instead of clicked: not a transcript message (it would sit between a call and its result). */
export interface TypedReply {
  by: string;
  text: string;
  at: number;
}

/** A decision handed to another person: recorded, and the person added to those who may decide. */
export interface Delegation {
  by: string;
  to: string;
  at: number;
}

/** One person's approval of a gate that needs several (or someone other than the requester). */
export interface Approval {
  by: string;
  at: number;
  via?: DecidedVia;
}

export interface ApprovalGate extends GateBase {
  kind: 'approval';
  toolName: string;
  /** The exact arguments shown to the approver; an approval is bound to them. */
  args: Record<string, unknown>;
  /** The text allow patterns and grants match (e.g. the shell command), offered as a pattern default. */
  subject: string;
  /** Distinct approvals the call needs (M of N, policy `approvals`); absent on older gates: 1. */
  approvalsNeeded?: number;
  /** false: the requester may not approve their own call, only deny it (policy `selfApprove`); absent: true. */
  selfApprove?: boolean;
  /** Approvals so far, in order, one per person; the gate resolves once there are `approvalsNeeded`. */
  approvals?: Approval[];
  /** Policy `escalate`: at `at`, if still undecided, `to` are added to the approvers and asked (`done` then). */
  escalation?: { at: number; to: string[]; done?: boolean };
}

/**
 * An ask_user call: the model's questions, waiting for the person asked (or an approver) to answer. Or a tool
 * server's question in the middle of a call (MCP elicitation, `asks`): then `toolName` is that tool's, and only
 * the person whose call it is answers.
 */
export interface QuestionGate extends GateBase {
  kind: 'question';
  toolName: string;
  questions: Question[];
  /** A tool server asks (not the model): what it said, and how each answer becomes the value it wants. */
  asks?: {
    server: string;
    message: string;
    /** URL mode: the link the person opens and finishes at. */
    url?: string;
    fields: ElicitField[];
    /** A long form is asked in parts of five: this is part `part[0]` of `part[1]`. */
    part?: [number, number];
  };
  /** Answers given one question at a time, per person, until all are in (see answerDraftSchema). */
  drafts?: Record<string, Answer[]>;
}

/**
 * A tool needs a credential the person has not connected: the session shows "Connect <provider>" and waits
 * for `credentialProvided` from the gateway's sign-in callback. Only the person whose credential it is
 * (the requester) can satisfy it; no secret ever reaches the workflow.
 */
export interface CredentialGate extends GateBase {
  kind: 'credential';
  toolName: string;
  provider: string;
  providerName: string;
  credentialKind: 'oauth2' | 'api_key';
  /** Why the person is asked (again), shown on the prompt: e.g. their stored sign-in could not be read. */
  note?: string;
}

export type Gate = ApprovalGate | QuestionGate | CredentialGate;

/** A notice for one person (a refused or stale click) or for everyone in the conversation (`to` absent). */
export interface Notice {
  id: string;
  to?: string;
  text: string;
  at: number;
  /** The gate whose outcome this notice tells: a page that shows the gate says it there instead, once. */
  gateId?: string;
  /**
   * The gate a person's own decision or answer was on, when this notice is the workflow's verdict on it (refused, or
   * one approval of several counted): what an AG-UI resume waits for. Shown like any other personal notice.
   */
  about?: string;
}

export type ForkMode = 'through' | 'retry';

/** What a fork records of where it came from: shown on both sides and kept in the memo. */
export interface ForkOrigin {
  /** The original conversation's workflow id. */
  workflowId: string;
  /** The message the fork was made at: the last one it holds, or (retry) the answer it writes again. */
  messageId: string;
  mode: ForkMode;
  /** Who forked: the new conversation's owner. */
  by: string;
  at: number;
  /** `provider:model` the fork answers with (absent: the deployment's chain). */
  model?: string;
  /** A retry: the answer it writes again, for the side-by-side view. */
  original?: { text: string; model?: string };
}

export interface SessionInput {
  sessionId: string;
  channel: 'web' | 'slack' | 'discord' | 'teams' | 'mission';
  ownerId: string;
  /** A mission run: one turn on the goal, gates reported to the mission, then the result is returned. */
  run?: {
    missionWorkflowId: string;
    missionName: string;
    /** A shared mission: others see and may fire it; its runs still act as the owner, with the owner's credentials. */
    shared?: boolean;
  };
  /** A fork of another conversation (common/fork.ts): where it came from, and the model it answers with. */
  fork?: ForkOrigin;
  /** Carried across continue-as-new. */
  carried?: CarriedState;
}

export interface CarriedState {
  transcript: Message[];
  /** Open gates already e-mailed to their deciders (gate-mail.ts). */
  mailedGates?: string[];
  /** A2A tasks whose changes are pushed, and the state last pushed for each (a2a-push.ts). */
  a2aPush?: { taskId: string; sent?: string; owedSince?: number }[];
  grants: Grant[];
  inbox: UserMessage[];
  notices: Notice[];
  gates: Gate[];
  /** A turn whose approvals were still open when the session continued as new; the next run resumes it. */
  turn?: CarriedTurn;
  /** What the conversation (or mission run) has spent on model calls, and budget allowances approved. */
  usage?: Spend;
  /** The same by the model that answered (`provider:model`). */
  usageByModel?: Record<string, Spend>;
  budgetContinuedAt?: Continued;
  /** Gateway seals believed, and operator signatures (MAC, when made), until they expire: each is believed once. */
  usedSeals?: [string, number][];
  usedClaims?: [string, number][];
}

export interface CarriedTurn {
  requesterId: string;
  step: number;
  /** What the turn had spent (absent: nothing counted yet, or before budgets existed). */
  spend?: { spend: Spend; continuedAt?: Continued };
  /** It waited at a budget gate, before its next model call (not at a step's tool calls). */
  atBudgetGate?: true;
  /** Gates whose decision this run already told (gate_resolved and a notice): the next run does not tell them again. */
  told?: string[];
  /**
   * The budget gate it waited at (with atBudgetGate). A decision that arrived while the run was handing over is
   * carried with the gate: the next run takes that gate up again instead of asking anew.
   */
  budgetGateId?: string;
  /** The turn's trace key (workflows/turn-trace.ts): the next run goes on in the same trace. */
  trace?: { key: string; startedAt: number };
}

export interface SessionView {
  sessionId: string;
  channel: string;
  ownerId: string;
  status: SessionStatus;
  /** Increases on every change, so live views know when to redraw. */
  version: number;
  transcript: Message[];
  gates: Gate[];
  grants: Grant[];
  notices: Notice[];
  queued: number;
  /** Model usage of this conversation (absent before budgets existed). */
  usage?: Spend;
  /** The same by the model that answered (`provider:model`): which models wrote this conversation's answers. */
  usageByModel?: Record<string, Spend>;
  /** This conversation is a fork of another (common/fork.ts). */
  forkedFrom?: ForkOrigin;
  /** The turn waits until `until` because the model's provider asked to (retry-after); tryModelNow ends it. */
  modelWait?: { until: number; requesterId: string };
}

export const gatewaySealSchema = schemas.gatewaySeal;
export type GatewaySeal = z.infer<typeof gatewaySealSchema>;
/**
 * The signals that act in a person's name carry the gateway's seal as a second argument (infra/gateway-seal.ts),
 * added by the gateway's client; the workflow believes them only once the worker has checked it.
 */
export const userMessageSignal = defineSignal<[UserMessage, GatewaySeal?]>('userMessage');
export const decideSignal = defineSignal<[Decision, GatewaySeal?, SignalOrigin?]>('decide');
export const revokeGrantSignal = defineSignal<[RevokeGrant, GatewaySeal?]>('revokeGrant');
export const answerSignal = defineSignal<[AnswerSubmission, GatewaySeal?, SignalOrigin?]>('answer');

/**
 * Where a decision or an answer was made, told by the gateway as the signal's third argument, which workflows of
 * earlier versions ignore (the decision's own schema is strict: a new field there would be refused by them). It is
 * believed only with the signal's seal and its own MAC over that seal (infra/gateway-seal.ts originMac): the same
 * sealed signal sent with another place carries no place the workflow believes.
 */
export const signalOriginSchema = schemas.signalOrigin;
/** As a gateway's caller passes it (`via`); its client adds the MAC that binds it to the seal. */
export type SignalOrigin = { via: DecisionSurface; mac?: string };
/** A decision or an answer with where it was made, once its seal was believed. */
export type Decided<T> = T & { via?: DecisionSurface };

export const repostPendingSchema = schemas.repostPending;
export const stopSchema = schemas.stop;
export type StopRequest = z.infer<typeof stopSchema>;
/**
 * Stop the running turn: the model call is abandoned, a running tool cancelled (its result says so), the turn's
 * open gates close as stopped; queued messages stay queued. Typing `stop` in the conversation does the same.
 */
export const stopSignal = defineSignal<[StopRequest]>('stop');

export const tryModelNowSchema = schemas.tryModelNow;
/**
 * "Try the fallback now": ends the wait a provider's retry-after set (SessionView.modelWait) and asks every model of
 * the chain at once, the step's own model no longer required. The turn's requester or an approver may; anyone else
 * is told who may.
 */
export const tryModelNowSignal = defineSignal<[z.infer<typeof tryModelNowSchema>]>('tryModelNow');

export const a2aPushSchema = schemas.a2aPush;
/**
 * "Push this task's changes": an A2A client set a push config for it (kept in the vault with its token, never
 * here). The workflow then has its changes pushed by an activity, which reads the configs; the signal carries no
 * person's authority, only a task id, so it needs no seal.
 */
export const a2aPushSignal = defineSignal<[z.infer<typeof a2aPushSchema>]>('a2aPush');

export const archiveSchema = schemas.archive;
export type ArchiveRequest = z.infer<typeof archiveSchema>;
/** The conversation's `archived` memo: the owner's list shows it under "Archived" (it still answers messages). */
export const archiveSignal = defineSignal<[ArchiveRequest]>('archive');
export const feedbackSchema = schemas.feedback;
export type Feedback = z.infer<typeof feedbackSchema>;
/** A rating of an answer: recorded on the message and in the `AgentFeedback` search attribute. */
export const feedbackSignal = defineSignal<[Feedback]>('feedback');
/** "pending": post the open gates again with fresh buttons (the old ones keep working). */
export const repostPendingSignal = defineSignal<[z.infer<typeof repostPendingSchema>]>('repostPending');
export const stateQuery = defineQuery<SessionView>('state');
export const transcriptQuery = defineQuery<Message[]>('transcript');
export const pendingGatesQuery = defineQuery<Gate[]>('pendingGates');
export const answerDraftSignal = defineSignal<[AnswerDraft, GatewaySeal?]>('answerDraft');

/** From a mission to the conversation it reports to: a result to post, or a run's gate to show or update. */
export interface MissionEvent {
  missionId: string;
  missionName: string;
  text?: string;
  gate?: Gate;
  resolved?: boolean;
  outcome?: string;
  runWorkflowId?: string;
  /** The run's gate is still open: post its prompt here again. */
  reminder?: boolean;
  /** A notice from a run for one person here (a click on the run's gate it refused). */
  notice?: { text: string; to: string };
}
export const missionEventSignal = defineSignal<[MissionEvent]>('missionEvent');

/** Sent by the gateway after a successful sign-in or key entry: ids only, never the secret. */
export const credentialProvidedSchema = schemas.credentialProvided;
export type CredentialProvided = z.infer<typeof credentialProvidedSchema>;
export const credentialProvidedSignal = defineSignal<[CredentialProvided]>('credentialProvided');

/** What a click led to, for gateways that answer the clicker themselves (Discord's ephemeral replies). */
export interface ClickOutcome {
  gate: Gate | null;
  /** Notices to this person at or after `since` (workflow time, ms). */
  notices: Notice[];
  /**
   * Signals in a person's name that arrived and wait for their gateway seal's check: while any do, the click's
   * outcome is not known yet (look again). Absent from workers before the seals.
   */
  checking?: number;
}
export const clickOutcomeQuery = defineQuery<
  ClickOutcome,
  [{ gateId: string; userId: string; since: number }]
>('gateFeedback'); // the wire name from before the rename: running workflows and older gateways use it

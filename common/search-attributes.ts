/**
 * Custom search attributes: what operators filter on in the Temporal UI and `temporal workflow list`.
 * The worker registers them at start (idempotently); workflows upsert them.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const AgentStatus = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AgentChannel = defineSearchAttributeKey('AgentChannel', SearchAttributeType.KEYWORD);
export const AgentOwner = defineSearchAttributeKey('AgentOwner', SearchAttributeType.KEYWORD);

/** `<user>:<provider>` for every credential a run waits on, so a sign-in finds every waiting workflow. */
export const AgentCredentialWaits = defineSearchAttributeKey(
  'AgentCredentialWaits',
  SearchAttributeType.KEYWORD_LIST,
);

/**
 * Every id that may decide one of the workflow's open gates (gate-memo.ts `gateDeciders`): "Needs you" lists a
 * person's decisions with one visibility query over their ids, with no worker asked.
 */
export const AgentDeciders = defineSearchAttributeKey('AgentDeciders', SearchAttributeType.KEYWORD_LIST);

export const AgentMissionName = defineSearchAttributeKey('AgentMissionName', SearchAttributeType.KEYWORD);
export const AgentMissionStatus = defineSearchAttributeKey('AgentMissionStatus', SearchAttributeType.KEYWORD);
/**
 * A mission shared with everyone keeps its name here, lower-cased (absent while not shared): another person's
 * `mission_fire "standup"` finds the shared missions of that name with one visibility query, and no workflow holds
 * every shared mission.
 */
export const AgentSharedMission = defineSearchAttributeKey('AgentSharedMission', SearchAttributeType.KEYWORD);

/** Model usage of a conversation (or mission run): tokens, and dollars where the policy prices the model. */
export const AgentTokens = defineSearchAttributeKey('AgentTokens', SearchAttributeType.INT);
export const AgentCostUsd = defineSearchAttributeKey('AgentCostUsd', SearchAttributeType.DOUBLE);

/** The ratings people gave the agent's answers in a conversation (`good`, `bad`): find the ones to look at. */
export const AgentFeedback = defineSearchAttributeKey('AgentFeedback', SearchAttributeType.KEYWORD_LIST);

/** A fork's original conversation (its workflow id), set at the fork's start: find every fork of a conversation. */
export const AgentForkedFrom = defineSearchAttributeKey('AgentForkedFrom', SearchAttributeType.KEYWORD);

/**
 * Attributes added after the first release: a namespace set up by hand (Temporal Cloud) may not have them yet,
 * so workflows set them only where the worker found them registered (settings).
 */
export const OPTIONAL_SEARCH_ATTRIBUTES = [
  'AgentTokens',
  'AgentCostUsd',
  'AgentFeedback',
  'AgentDeciders',
  'AgentSharedMission',
  'AgentForkedFrom',
];

export const customSearchAttributes = [
  AgentStatus,
  AgentChannel,
  AgentOwner,
  AgentCredentialWaits,
  AgentDeciders,
  AgentMissionName,
  AgentMissionStatus,
  AgentSharedMission,
  AgentTokens,
  AgentCostUsd,
  AgentFeedback,
  AgentForkedFrom,
] as const;

export const credentialWaitValue = (userId: string, provider: string): string => `${userId}:${provider}`;

/** Session status as the search attribute and the web chat show it. */
export type SessionStatus = 'idle' | 'running' | 'waiting_approval' | 'waiting_answer' | 'waiting_credential';

/**
 * Custom search attributes: what operators filter on in the Temporal UI and `temporal workflow list`.
 * The worker registers them at start (idempotently); workflows upsert them.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const AgentStatus = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AgentChannel = defineSearchAttributeKey('AgentChannel', SearchAttributeType.KEYWORD);
export const AgentOwner = defineSearchAttributeKey('AgentOwner', SearchAttributeType.KEYWORD);

export const customSearchAttributes = [AgentStatus, AgentChannel, AgentOwner] as const;

/** Session status as the search attribute and the web chat show it. */
export type SessionStatus = 'idle' | 'running' | 'waiting_approval' | 'waiting_answer';

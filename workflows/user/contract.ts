/**
 * The per-user directory workflow (`user:<id>`): the strongly consistent home of a user's standing
 * grants and of their daily model spending across conversations (budgets). Adding a grant is an update, so the caller knows it is stored before the next policy check
 * reads it; revoking is a signal, accepted even while workers are down.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DaySpend, ModelUsage } from '../../common/budgets';
import type { Grant } from '../../common/grants';
import type { GatewaySeal } from '../session/contract';

export const addGrantUpdate = defineUpdate<Grant, [Grant]>('addGrant');
/** Sealed by the gateway (its second argument): the revocation is recorded as the person's own act. */
export const revokeUserGrantSignal = defineSignal<[{ grantId: string }, GatewaySeal?]>('revokeUserGrant');
export const grantsQuery = defineQuery<Grant[]>('grants');

/**
 * The gateway tells a person's directory each credential they connect (a sign-in, a pasted key) or disconnect, so the
 * audit trail has it (workflows/audit-trail.ts); the credential itself stays in the vault, never here.
 */
export interface CredentialChange {
  provider: string;
  action: 'connected' | 'disconnected';
  how?: 'oauth' | 'api_key';
}
/** Sealed by the gateway (its second argument), checked by the worker before it is recorded: nobody else tells it. */
export const credentialChangeSignal = defineSignal<[CredentialChange, GatewaySeal?]>('credentialChange');

/**
 * Adds a model call's usage (or one more daily allowance, approved at a budget gate) to a UTC day and returns
 * that day's total. `key` makes a retried record count once.
 */
export interface SpendRecord {
  day: string;
  key: string;
  usage?: ModelUsage;
  raise?: true;
}
export const recordSpendUpdate = defineUpdate<DaySpend, [SpendRecord]>('recordSpend');
export const spendQuery = defineQuery<Record<string, DaySpend>>('spend');

export interface UserDirectoryInput {
  userId: string;
  /** Gateway seals already believed (MAC, when made), until they expire. */
  usedSeals?: [string, number][];
  grants?: Grant[];
  /** Spending by UTC day, the last few days. */
  spend?: Record<string, DaySpend>;
  /** Keys of the latest spend records, so a retry across continue-as-new still counts once. */
  spendKeys?: string[];
}

/**
 * The per-user directory workflow (`user:<id>`): the strongly consistent home of a user's standing
 * grants. Adding a grant is an update, so the caller knows it is stored before the next policy check
 * reads it; revoking is a signal, accepted even while workers are down.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Grant } from '../../common/grants';

export const addGrantUpdate = defineUpdate<Grant, [Grant]>('addGrant');
export const revokeUserGrantSignal = defineSignal<[{ grantId: string }]>('revokeUserGrant');
export const grantsQuery = defineQuery<Grant[]>('grants');

export interface UserDirectoryInput {
  userId: string;
  grants?: Grant[];
}

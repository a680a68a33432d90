/** Workflow ids built from the conversation's own coordinates, so no lookup table exists anywhere. */
import { z } from 'zod';

/** A web session id: chosen by the page (a UUID), restricted so it is safe in URLs and workflow ids. */
export const webSessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a session id is 1-64 letters, digits, - or _');

/** A user id as gateways pass it: a platform user id or a web user name. */
export const userIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._@:-]{1,128}$/, 'a user id is 1-128 letters, digits or . _ @ : -');

export const webSessionWorkflowId = (sessionId: string): string => `session:web:${sessionId}`;
export const userWorkflowId = (userId: string): string => `user:${userId}`;

export const sessionWorkflowIdSchema = z
  .string()
  .regex(/^session:[a-z]+:[^\s]{1,250}$/, 'not a session workflow id');

export function temporalUiLink(
  uiUrl: string | undefined,
  namespace: string,
  workflowId: string,
): string | undefined {
  if (!uiUrl) return undefined;
  return `${uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

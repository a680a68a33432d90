/** "Always allow" grants: a user's standing approval of a tool, in one conversation or everywhere. */
import { z } from 'zod';
import { sharedSchemas } from './shared-schemas';

const schemas = sharedSchemas('grants', () => {
  const scope = z.enum(['session', 'user']);
  return {
    scope,
    grant: z.strictObject({
      id: z.string().min(1).max(64),
      userId: z.string().min(1).max(128),
      toolName: z.string().min(1).max(128),
      /** Glob over the tool's subject (e.g. `git status*`); absent means every call of the tool. */
      pattern: z.string().min(1).max(500).optional(),
      scope,
      /** The session workflow id, for session-scoped grants. */
      sessionId: z.string().max(300).optional(),
      createdAt: z.number(),
    }),
  };
});
export const grantScopeSchema = schemas.scope;
export const grantSchema = schemas.grant;
export type Grant = z.infer<typeof grantSchema>;

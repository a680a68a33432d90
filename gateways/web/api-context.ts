/**
 * What every route of the web chat's API shares, passed explicitly: the dependencies, the per-person rate
 * limits, the Temporal UI link, and the checks the routes repeat (rate, access, body, session id).
 */
import type { InboxFeeds } from './inbox-feed';
import type { Context } from 'hono';
import type { z } from 'zod';
import { webSessionIdSchema } from '../../common/ids';
import type { RateLimiter } from './auth/rate-limit';
import type { WebRouteDeps } from './route-deps';

/** Set by the API's guard once the caller is known: every route reads who asks from here. */
export type ApiEnv = { Variables: { userId: string } };

export interface WebApi {
  deps: WebRouteDeps;
  /** The workflow's page in the Temporal UI, or undefined when no UI is configured. */
  link: (workflowId: string) => string | undefined;
  messageRate: RateLimiter;
  sessionRate: RateLimiter;
  /** "Needs you" reads and decisions: each costs the namespace's visibility rate (docs/SCALING.md). */
  inboxRate: RateLimiter;
  /** "Needs you", pushed to open tabs; nudged when a decision or message goes through this gateway. */
  inboxFeeds: InboxFeeds;
}

/** The words of a refused request: what there was too much of, and how long to wait. */
export const tooMany = (limited: { what: string; wait: number }) =>
  `too many ${limited.what}: try again in ${limited.wait} s`;

export const limited = (c: Context, limiter: RateLimiter, what: string) => {
  const wait = limiter.take(c.get('userId') as string);
  if (wait === undefined) return undefined;
  c.header('retry-after', String(wait));
  return c.json({ error: tooMany({ what, wait }) }, 429);
};

/** 404 for a session the caller may not see, exactly as for one that does not exist. */
export const hidden = (c: Context) => c.json({ error: 'no such session' }, 404);
export const mayUse = async (api: WebApi, c: Context, workflowId: string) =>
  (await api.deps.access.check(workflowId, c.get('userId') as string)) === 'allowed';

export const parseBody = async <T extends z.ZodType>(c: Context, schema: T) => {
  const raw: unknown = await c.req.json().catch(() => undefined);
  if (raw === undefined) return { ok: false as const, error: 'the body must be JSON' };
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false as const,
      error: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    };
  return { ok: true as const, value: parsed.data as z.infer<T> };
};

export const sessionParam = (c: Context) => webSessionIdSchema.safeParse(c.req.param('id'));

/**
 * The web chat's JSON API and live stream. Stateless: every request authenticates, validates with the
 * contract's schemas, and signals or queries Temporal. Nothing pending lives here.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { temporalUiLink, webSessionIdSchema, webSessionWorkflowId } from '../../common/ids';
import { grantScopeSchema } from '../../common/grants';
import type { Logger } from '../../infra/log';
import {
  answerSubmissionSchema,
  decisionSchema,
  gateButtonValueSchema,
  type SessionView,
} from '../../workflows/session/contract';
import type { CredentialService } from '../../infra/credentials/service';
import type { WebAuth } from './auth/web-auth';
import { refuseCrossSite, refuseForeignHost } from './auth/request-guard';
import { RateLimiter } from './auth/rate-limit';
import type { LiveViews } from './live-views';
import type { StreamHub } from '../stream-hub';
import type { SessionAccess } from './session-access';
import type { Sessions } from '../sessions';
import { mountStream } from './stream-route';

export interface WebRouteDeps {
  sessions: Sessions;
  auth: WebAuth;
  access: SessionAccess;
  /** The live views (one watch per session in this process, shared by its tabs). */
  live: LiveViews;
  /** Partial text of answers being written (streamed answers), pushed to the tabs too. */
  streams?: StreamHub;
  rate: { messagesPerMinute: number; sessionsPerMinute: number };
  temporalUiUrl: string | undefined;
  namespace: string;
  log: Logger;
  /** A personal "Connect <provider>" link for this user. */
  connectUrl: (userId: string, provider: string, expiresAt?: number) => string;
  credentials: () => CredentialService;
}

const messageBodySchema = z.strictObject({
  text: z.string().trim().min(1, 'the message is empty').max(20_000),
  messageId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
});

const decisionBodySchema = gateButtonValueSchema.extend({
  workflowId: z
    .string()
    .regex(/^session:web:[A-Za-z0-9_-]{1,64}$/, 'the web chat decides on web sessions only'),
  reason: decisionSchema.shape.reason,
  args: decisionSchema.shape.args,
  scope: decisionSchema.shape.scope,
  pattern: decisionSchema.shape.pattern,
});

const answersBodySchema = z.strictObject({
  workflowId: decisionBodySchema.shape.workflowId,
  gateId: answerSubmissionSchema.shape.gateId,
  answers: answerSubmissionSchema.shape.answers,
});

const revokeBodySchema = z.strictObject({
  grantId: z.string().min(1).max(64),
  scope: grantScopeSchema,
  sessionId: webSessionIdSchema.optional(),
});

/**
 * The view one user sees: notices addressed to someone else are dropped, and that person's open sign-ins
 * carry their personal Connect link (nobody else gets one).
 */
function forUser(
  view: SessionView,
  userId: string,
  connect: (provider: string, expiresAt: number) => string,
): SessionView {
  return {
    ...view,
    notices: view.notices.filter((n) => !n.to || n.to === userId),
    gates: view.gates.map((gate) =>
      gate.kind === 'credential' && gate.status === 'pending' && gate.requesterId === userId
        ? {
            ...gate,
            connectUrl: connect(gate.provider, gate.expiresAt ?? gate.createdAt + 7 * 24 * 3_600_000),
          }
        : gate,
    ),
  };
}

export function webRoutes(deps: WebRouteDeps): Hono<{ Variables: { userId: string } }> {
  const app = new Hono<{ Variables: { userId: string } }>();
  const { sessions, log } = deps;
  const link = (workflowId: string) => temporalUiLink(deps.temporalUiUrl, deps.namespace, workflowId);

  const messageRate = new RateLimiter(deps.rate.messagesPerMinute);
  const sessionRate = new RateLimiter(deps.rate.sessionsPerMinute);
  const limited = (c: Context, limiter: RateLimiter, what: string) => {
    const wait = limiter.take(c.get('userId') as string);
    if (wait === undefined) return undefined;
    c.header('retry-after', String(wait));
    return c.json({ error: `too many ${what}: try again in ${wait} s` }, 429);
  };

  // Order matters: the host and the caller are known before the body is read, the body is bounded before
  // it is parsed, and nothing unauthenticated reaches Temporal.
  app.use('*', async (c, next) => {
    const foreign = refuseForeignHost(c, deps.auth);
    if (foreign) return c.json({ error: foreign.error }, foreign.status);
    const who = deps.auth.identify(c);
    if (!who.ok)
      return c.json(
        { error: who.error, ...(deps.auth.mode === 'login' ? { signIn: '/auth/login' } : {}) },
        who.status,
      );
    const crossSite = refuseCrossSite(c, deps.auth, who.caller);
    if (crossSite) return c.json({ error: crossSite.error }, crossSite.status);
    c.set('userId', who.caller.userId);
    await next();
  });

  /** 404 for a session the caller may not see, exactly as for one that does not exist. */
  const hidden = (c: Context) => c.json({ error: 'no such session' }, 404);
  const mayUse = async (c: Context, workflowId: string) =>
    (await deps.access.check(workflowId, c.get('userId') as string)) === 'allowed';

  const parseBody = async <T extends z.ZodType>(c: Context, schema: T) => {
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

  const sessionParam = (c: Context) => webSessionIdSchema.safeParse(c.req.param('id'));

  app.get('/me', (c) =>
    c.json({
      userId: c.get('userId'),
      mode: deps.auth.mode,
      temporalUiUrl: deps.temporalUiUrl ?? null,
      namespace: deps.namespace,
    }),
  );

  /** The signed-in person's connected providers (names and expiry only), and disconnect. */
  app.get('/credentials', async (c) => {
    const credentials = deps.credentials();
    const connected = await credentials.vault.connected(c.get('userId'));
    return c.json({
      providers: Object.values(credentials.providers).map((p) => ({
        name: p.name,
        displayName: p.displayName,
        kind: p.kind,
        connected: connected.some((x) => x.provider === p.name),
        connectUrl: deps.connectUrl(c.get('userId'), p.name),
      })),
    });
  });

  app.delete('/credentials/:provider', async (c) => {
    const provider = c.req.param('provider');
    const credentials = deps.credentials();
    if (!credentials.provider(provider))
      return c.json({ error: `no provider "${provider}" is configured` }, 404);
    const removed = await credentials.disconnect(c.get('userId'), provider);
    log.info('credential disconnected', { provider, userId: c.get('userId'), removed });
    return c.json({ disconnected: removed });
  });

  app.get('/sessions', async (c) => {
    const list = await sessions.list(c.get('userId'));
    return c.json({ sessions: list.map((s) => ({ ...s, temporalUrl: link(s.workflowId) ?? null })) });
  });

  app.post('/sessions', (c) => {
    const refused = limited(c, sessionRate, 'new conversations');
    if (refused) return refused;
    const sessionId = randomUUID();
    return c.json(
      {
        sessionId,
        workflowId: webSessionWorkflowId(sessionId),
        temporalUrl: link(webSessionWorkflowId(sessionId)) ?? null,
      },
      201,
    );
  });

  app.post('/sessions/:id/messages', async (c) => {
    const id = sessionParam(c);
    if (!id.success) return c.json({ error: 'invalid session id' }, 400);
    const body = await parseBody(c, messageBodySchema);
    if (!body.ok) return c.json({ error: body.error }, 400);
    // Temporal unreachable: nothing was recorded, and the page keeps the text for another try.
    const notSent = (error: unknown) => {
      log.warn('message not accepted', { sessionId: id.data, error: (error as Error).message });
      return c.json(
        {
          error:
            "Your message was not sent: the agent's server (Temporal) cannot be reached right now. Try again in a moment.",
        },
        503,
      );
    };
    let access;
    try {
      access = await deps.access.check(webSessionWorkflowId(id.data), c.get('userId'));
    } catch (error) {
      return notSent(error);
    }
    if (access === 'denied') return hidden(c);
    const refused =
      limited(c, messageRate, 'messages') ??
      (access === 'absent' ? limited(c, sessionRate, 'new conversations') : undefined);
    if (refused) return refused;
    const message = {
      messageId: body.value.messageId ?? randomUUID(),
      userId: c.get('userId'),
      text: body.value.text,
    };
    try {
      if (access === 'absent' && !(await sessions.startOwned(id.data, message))) {
        // Someone started this id between the check and the start: only its owner may post into it.
        if ((await deps.access.check(webSessionWorkflowId(id.data), c.get('userId'))) !== 'allowed')
          return hidden(c);
        await sessions.start(webSessionWorkflowId(id.data), message, id.data);
      } else if (access !== 'absent') await sessions.start(webSessionWorkflowId(id.data), message, id.data);
    } catch (error) {
      return notSent(error);
    }
    deps.live.nudge(webSessionWorkflowId(id.data));
    log.info('message accepted', {
      workflowId: webSessionWorkflowId(id.data),
      userId: message.userId,
      messageId: message.messageId,
    });
    return c.json({ accepted: true, messageId: message.messageId }, 202);
  });

  app.get('/sessions/:id', async (c) => {
    const id = sessionParam(c);
    if (!id.success) return c.json({ error: 'invalid session id' }, 400);
    const workflowId = webSessionWorkflowId(id.data);
    if (!(await mayUse(c, workflowId))) return hidden(c);
    try {
      const view = forUser(await sessions.state(workflowId), c.get('userId'), (p, e) =>
        deps.connectUrl(c.get('userId'), p, e),
      );
      return c.json({ ...view, temporalUrl: link(workflowId) ?? null });
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return c.json({ error: 'no such session' }, 404);
      return c.json(
        {
          error:
            'the agent is not answering right now (is a worker running?). Messages and clicks are kept and handled when it is back.',
        },
        503,
      );
    }
  });

  mountStream(app, deps, (view, userId, workflowId) => ({
    ...forUser(view, userId, (p, e) => deps.connectUrl(userId, p, e)),
    temporalUrl: link(workflowId) ?? null,
  }));

  /** A click or a form becomes a signal; the workflow checks it and answers the person afterwards. */
  const acceptSignal = async (
    c: Context<{ Variables: { userId: string } }>,
    what: string,
    send: () => Promise<void>,
    fields: { workflowId: string } & Record<string, unknown>,
  ) => {
    if (!(await mayUse(c, fields.workflowId)))
      return c.json({ error: 'that conversation no longer exists' }, 404);
    try {
      await send();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError)
        return c.json({ error: 'that conversation no longer exists' }, 404);
      throw error;
    }
    deps.live.nudge(fields.workflowId);
    log.info(`${what} accepted`, { ...fields, userId: c.get('userId') });
    return c.json({ accepted: true }, 202);
  };

  app.post('/decisions', async (c) => {
    const body = await parseBody(c, decisionBodySchema);
    if (!body.ok) return c.json({ error: body.error }, 400);
    const { workflowId, ...rest } = body.value;
    return await acceptSignal(
      c,
      'decision',
      () => sessions.decide(workflowId, { ...rest, userId: c.get('userId') }),
      {
        workflowId,
        gateId: rest.gateId,
        choice: rest.choice,
      },
    );
  });

  /** The Stop button: stops the turn running in this conversation (its requester or an approver may). */
  app.post('/sessions/:id/stop', async (c) => {
    const id = sessionParam(c);
    if (!id.success) return c.json({ error: 'invalid session id' }, 400);
    const workflowId = webSessionWorkflowId(id.data);
    return await acceptSignal(c, 'stop', () => sessions.stop(workflowId, c.get('userId')), { workflowId });
  });

  app.post('/answers', async (c) => {
    const body = await parseBody(c, answersBodySchema);
    if (!body.ok) return c.json({ error: body.error }, 400);
    const { workflowId, ...rest } = body.value;
    return await acceptSignal(
      c,
      'answers',
      () => sessions.answer(workflowId, { ...rest, userId: c.get('userId') }),
      {
        workflowId,
        gateId: rest.gateId,
      },
    );
  });

  app.get('/grants', async (c) => {
    const userId = c.get('userId');
    const sessionId = webSessionIdSchema.safeParse(c.req.query('sessionId'));
    try {
      const mine = await sessions.userGrants(userId);
      let sessionGrants: unknown[] = [];
      if (sessionId.success) {
        sessionGrants = await sessions
          .state(webSessionWorkflowId(sessionId.data))
          .then((view) => view.grants.filter((g) => g.userId === userId))
          .catch(() => []);
      }
      return c.json({ grants: [...sessionGrants, ...mine] });
    } catch {
      return c.json({ error: 'grants cannot be read right now (is a worker running?)' }, 503);
    }
  });

  app.post('/grants/revoke', async (c) => {
    const body = await parseBody(c, revokeBodySchema);
    if (!body.ok) return c.json({ error: body.error }, 400);
    const userId = c.get('userId');
    if (body.value.scope === 'user') await sessions.revokeUserGrant(userId, body.value.grantId);
    else {
      if (!body.value.sessionId)
        return c.json({ error: 'sessionId is required to revoke a conversation grant' }, 400);
      if (!(await mayUse(c, webSessionWorkflowId(body.value.sessionId)))) return hidden(c);
      await sessions.revokeSessionGrant(
        webSessionWorkflowId(body.value.sessionId),
        userId,
        body.value.grantId,
      );
      deps.live.nudge(webSessionWorkflowId(body.value.sessionId));
    }
    return c.json({ accepted: true }, 202);
  });

  return app;
}

/**
 * Mission endpoints: `POST /hooks/missions/<id>` (a webhook-cadence mission's trigger, authenticated by its
 * own secret in X-Mission-Secret; the body becomes the run's context; an Idempotency-Key header makes a call sent
 * again the same trigger) and, for the web user who owns a
 * mission, `GET /api/missions/<id>/webhook` to read that secret.
 */
import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { AgentMissionStatus } from '../../common/search-attributes';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { missionWorkflowId, type MissionRecord } from '../../common/missions/types';
import { webhookSecret, webhookSecretMatches } from '../../infra/missions-webhook';
import { withinDeadline } from '../../infra/temporal/deadline';
import { fireSignal } from '../../workflows/missions/contract';
import { ownMissions } from '../../infra/missions-directory';
import type { GatewayDeps } from '../platform';
import { CHAT_DEADLINE_MS } from '../sessions';

const missionIdSchema = z.uuid();
const MAX_CONTEXT = 4_000;
/** An Idempotency-Key (IETF httpapi draft): printable, bounded; the same key sent again is the same trigger. */
const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

/** Why a mission takes no trigger now (a run waits on a person, or it is paused or over), or undefined. */
function takesNoTrigger(described: WorkflowExecutionDescription): string | undefined {
  if (described.status.name !== 'RUNNING') return undefined; // the signal says "ended"
  // What the run waits on (who, which call) stays out of the answer: webhook callers' logs are not the owner's.
  const waitingFor = described.memo?.waitingFor;
  if (typeof waitingFor === 'string' && waitingFor)
    return 'a run of this mission still waits for a person: this trigger was not taken; send it again once that run is done';
  const status = described.typedSearchAttributes.get(AgentMissionStatus);
  if (status === 'paused')
    return 'the mission is paused: this trigger was not taken; its owner resumes it with mission_resume';
  return undefined;
}

export function mountMissions(app: Hono, deps: GatewayDeps): void {
  app.post('/hooks/missions/:id', async (c) => {
    const id = missionIdSchema.safeParse(c.req.param('id'));
    const secret = c.req.header('x-mission-secret') ?? '';
    // Any failure looks the same from outside: nothing reveals whether a mission exists.
    if (!id.success || !webhookSecretMatches(deps.credentials().keys.signing, id.data, secret))
      return c.json({ error: 'unknown mission or wrong secret (send it in X-Mission-Secret)' }, 401);
    const keyHeader = c.req.header('idempotency-key');
    const key =
      keyHeader === undefined ? undefined : idempotencyKeySchema.safeParse(keyHeader.replace(/^"|"$/g, ''));
    if (key && !key.success)
      return c.json({ error: 'Idempotency-Key is 1 to 200 printable characters without spaces' }, 400);
    const body = (await c.req.text().catch(() => '')).slice(0, MAX_CONTEXT + 1);
    if (body.length > MAX_CONTEXT)
      return c.json({ error: `the body is limited to ${MAX_CONTEXT} characters` }, 413);
    try {
      const handle = deps.client.workflow.getHandle(missionWorkflowId(id.data));
      // A trigger the mission would skip is refused with the reason, not accepted and its body dropped. The server
      // answers from the mission's memo and search attributes, with no worker.
      const refused = takesNoTrigger(
        await withinDeadline(deps.client, CHAT_DEADLINE_MS, () => handle.describe()),
      );
      if (refused) {
        deps.log.info('mission webhook refused', { missionId: id.data, why: refused });
        return c.json({ error: refused }, 409);
      }
      await withinDeadline(deps.client, CHAT_DEADLINE_MS, () =>
        handle.signal(fireSignal, {
          by: 'webhook',
          trigger: 'webhook',
          ...(body ? { context: body } : {}),
          // The mission takes one fire per key: a caller that got no answer sends it again without a second run.
          ...(key?.success ? { fireId: `webhook:${key.data}` } : {}),
        }),
      );
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return c.json({ error: 'that mission has ended' }, 404);
      deps.log.warn('mission webhook not recorded', { missionId: id.data, error: (error as Error).message });
      // The server did not answer in time: the fire may or may not have been recorded, and the answer says so.
      return c.json(
        {
          error: key?.success
            ? "the agent's server (Temporal) did not answer in time; this call may not have been recorded: send it again with the same Idempotency-Key, and it is taken once"
            : "the agent's server (Temporal) did not answer in time; this call may not have been recorded (send an Idempotency-Key header, and a call sent again is taken once)",
        },
        503,
      );
    }
    deps.log.info('mission webhook accepted', { missionId: id.data, bytes: body.length });
    return c.json({ accepted: true }, 202);
  });

  /**
   * A webhook mission's address and secret, for its owner only: by name (what the agent tells them, so no id is in
   * the conversation) or by id.
   */
  const webhookOf = async (c: Context, pick: (record: MissionRecord) => boolean) => {
    if (!deps.config.web.enabled) return c.json({ error: 'the web chat is off (WEB_CHAT=off)' }, 404);
    const who = deps.webAuth.identify(c);
    if (!who.ok) return c.json({ error: who.error }, who.status);
    const records = await withinDeadline(deps.client, CHAT_DEADLINE_MS, () =>
      ownMissions(deps.client, who.caller.userId),
    ).catch(() => []);
    // One that may still run before a completed namesake (a completed mission gives its name back).
    const mine = records.filter(pick);
    const record = mine.find((r) => r.status !== 'completed') ?? mine.at(-1);
    if (!record) return c.json({ error: 'no mission of yours has that name or id' }, 404);
    return c.json({
      mission: record.name,
      url: `${deps.config.publicUrl.replace(/\/$/, '')}/hooks/missions/${record.id}`,
      header: 'X-Mission-Secret',
      secret: webhookSecret(deps.credentials().keys.signing, record.id),
    });
  };
  app.get('/api/missions/webhook', async (c) => {
    const name = c.req.query('name')?.trim().toLowerCase();
    if (!name) return c.json({ error: 'name the mission: ?name=<its name>' }, 400);
    return await webhookOf(c, (r) => r.name.toLowerCase() === name);
  });
  app.get('/api/missions/:id/webhook', async (c) => {
    const id = missionIdSchema.safeParse(c.req.param('id'));
    if (!id.success) return c.json({ error: 'not a mission id' }, 400);
    return await webhookOf(c, (r) => r.id === id.data);
  });
}

/**
 * The `pushA2aTasks` activity (workflows/session/a2a-push.ts): each A2A task an A2A client asked to be told about,
 * read from the conversation as each receiver's person reads it (the same reading GetTask gives) and posted to the
 * receivers whose view of it changed since their last push. The receivers' addresses and tokens come from the
 * vault; what was pushed to whom is kept in the activity's heartbeat, so a retry after a receiver failed posts only
 * what is still owed. A person who may no longer read the conversation loses their receivers.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { StreamResponse, type Task } from '@a2a-js/sdk';
import { aliasesOf } from '../common/identities';
import type { AppConfig } from '../infra/config';
import type { CredentialService } from '../infra/credentials/service';
import type { PushConfig } from '../infra/credentials/vault';
import { postPush, PushRefused } from '../infra/a2a-push-destination';
import { parseTaskId, readTask, TERMINAL } from '../gateways/a2a/tasks';
import { gateInterrupt } from '../gateways/agui/interrupts';
import { connectUrl } from '../gateways/oauth/links';
import { stateQuery, type SessionView } from '../workflows/session/contract';
import { webSessionWorkflowId } from '../common/ids';
import type { Logger } from '../infra/log';

export interface PushRequest {
  workflowId: string;
  tasks: { taskId: string; sent?: string }[];
}
export interface PushedTask {
  taskId: string;
  /** What each receiver was last told (JSON: config id -> state key). */
  sent?: string;
  /** The task ended and every receiver was told, or it has no receivers left: it is no longer followed. */
  done?: true;
  /** A receiver did not take its push: the workflow asks again later. */
  owed?: true;
}

/**
 * What a receiver's reading of the task is, from its content (not the view's version, which moves with every change
 * of the conversation): a change of it is pushed, the same reading never twice.
 */
const stateKey = (task: Task) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        task.status?.state ?? 0,
        task.status?.message?.parts.map((p) => p.content) ?? [],
        task.artifacts.map((a) => a.parts.map((p) => p.content)),
      ]),
    )
    .digest('base64url')
    .slice(0, 22);

export function a2aPusher(deps: {
  config: AppConfig;
  client: Client;
  credentials: () => CredentialService;
  log: Logger;
}) {
  const { config, client, log } = deps;
  const approvers = new Set([
    ...config.policy.approvers,
    ...Object.values(config.policy.tools).flatMap((tool) => tool.approvers ?? []),
  ]);
  const pushHosts = { allowHosts: config.web.a2aPushAllowHosts, denyHosts: config.policy.denyHosts };
  const mayRead = (view: SessionView, userId: string) => {
    const ids = aliasesOf(userId, config.policy.users);
    return ids.includes(view.ownerId) || ids.some((id) => approvers.has(id));
  };

  return async function pushA2aTasks(request: PushRequest): Promise<PushedTask[]> {
    const activity = Context.current();
    // What an earlier attempt of this very push already told (a receiver failed after others were told).
    const told = new Map<string, string>(
      Object.entries((activity.info.heartbeatDetails as Record<string, string> | undefined) ?? {}),
    );
    const vault = deps.credentials().vault;
    const view = await client.workflow.getHandle(request.workflowId).query(stateQuery);
    const results: PushedTask[] = [];
    for (const { taskId, sent } of request.tasks) {
      const ids = parseTaskId(taskId);
      // Only this conversation's own tasks: a task id naming another conversation is never read or pushed here.
      if (!ids || webSessionWorkflowId(ids.contextId) !== request.workflowId) {
        results.push({ taskId, done: true });
        continue;
      }
      const configs = await vault.pushConfigs(taskId);
      if (!configs.length) {
        results.push({ taskId, done: true });
        continue;
      }
      const earlier: Record<string, string> = sent ? (JSON.parse(sent) as Record<string, string>) : {};
      // Only the receivers there are now: a removed one's entry goes.
      const last: Record<string, string> = {};
      for (const c of configs) if (earlier[c.id] !== undefined) last[c.id] = earlier[c.id]!;
      let ended = true;
      let owed = 0;
      for (const receiver of configs) {
        if (!mayRead(view, receiver.userId)) {
          await vault.deletePushConfig(taskId, receiver.id);
          log.info('a2a push config removed: its person may no longer read the conversation', { taskId });
          continue;
        }
        const read = readTask(view, ids.contextId, ids.messageId, receiver.userId, (gate) =>
          gateInterrupt(gate, receiver.userId, (provider, expiresAt) =>
            connectUrl(deps.credentials(), config.publicUrl, receiver.userId, provider, {
              channel: 'web',
              expiresAt,
            }),
          ),
        );
        if (!read) {
          ended = false; // the message is not taken yet
          continue;
        }
        const key = stateKey(read.task);
        if (!TERMINAL.has(read.task.status!.state)) ended = false;
        const toldKey = told.get(`${taskId} ${receiver.id}`);
        if (last[receiver.id] === key || toldKey === key) {
          last[receiver.id] = key;
          continue;
        }
        try {
          await post(receiver, read.task);
          last[receiver.id] = key;
          told.set(`${taskId} ${receiver.id}`, key);
          activity.heartbeat(Object.fromEntries(told));
        } catch (error) {
          if (error instanceof PushRefused) {
            // The address is refused now (its host moved to a private address): this receiver is dropped.
            await vault.deletePushConfig(taskId, receiver.id);
            log.warn('a2a push refused; its config was removed', { taskId, reason: error.message });
            continue;
          }
          owed++;
          log.warn('a2a push not taken; owed', { taskId, error: (error as Error).message });
        }
      }
      if (ended && owed === 0) {
        for (const receiver of configs) await vault.deletePushConfig(taskId, receiver.id);
        results.push({ taskId, done: true });
      } else results.push({ taskId, sent: JSON.stringify(last), ...(owed ? { owed: true as const } : {}) });
    }
    return results;
  };

  async function post(receiver: PushConfig, task: Task): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/a2a+json' };
    if (receiver.authentication)
      headers.authorization = `${receiver.authentication.scheme} ${receiver.authentication.credentials}`;
    else if (receiver.token) headers['x-a2a-notification-token'] = receiver.token;
    const body = JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'task', value: task } }));
    await postPush(receiver.url, pushHosts, headers, body);
  }
}

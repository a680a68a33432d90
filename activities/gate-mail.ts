/**
 * The `mailGates` activity (workflows/session/gate-mail.ts): a gate, mailed to each person who may decide it and
 * whose address the operator verified (the policy's `users.<name>.email`), in the words every other channel uses
 * (AG-UI's interrupt message), with a signed, single-use, expiring link to the gateway's confirm page. The link
 * decides nothing by being opened (mail scanners open links); the page decides on a POST from itself, signed in as
 * the person the mail was sent to. One conversation is one mail thread (its References).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Context } from '@temporalio/activity';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Client } from '@temporalio/client';
import { mayDecide } from '../common/gates/deciders';
import { aliasesOf } from '../common/identities';
import { escapeHtml } from '../common/html';
import { readMemoGates } from '../gateways/web/inbox-memo';
import { isBudgetGate, promptHeadline } from '../common/gates/words';
import type { AppConfig } from '../infra/config';
import type { CredentialService } from '../infra/credentials/service';
import { signGateLink } from '../infra/credentials/signed';
import type { Logger } from '../infra/log';
import { gateInterrupt } from '../gateways/agui/interrupts';
import type { Gate } from '../workflows/session/contract';

export interface MailGatesRequest {
  workflowId: string;
  channel: string;
  gates: Gate[];
}

/** The people a gate is mailed to: who may decide it (a sign-in: who asked), by their policy name and address. */
export function mailRecipients(
  gate: Gate,
  users: AppConfig['policy']['users'],
): { userId: string; address: string }[] {
  const deciders = gate.kind === 'credential' ? [gate.requesterId] : [gate.requesterId, ...gate.approvers];
  const found = new Map<string, { userId: string; address: string }>();
  for (const [name, person] of Object.entries(users)) {
    if (!person.email) continue;
    const ids = aliasesOf(name, users);
    const decider = deciders.find((id) => ids.includes(id));
    if (decider === undefined || (gate.kind !== 'credential' && !mayDecide(gate, decider))) continue;
    found.set(person.email.toLowerCase(), { userId: name, address: person.email });
  }
  return [...found.values()];
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

export function gateMailer(deps: { config: AppConfig; credentials: () => CredentialService; log: Logger }) {
  let transport: Transporter | undefined;
  return async function mailGates(request: MailGatesRequest): Promise<{ sent: number }> {
    const email = deps.config.email;
    if (!email) return { sent: 0 };
    transport ??= nodemailer.createTransport(email.smtpUrl);
    const activity = Context.current();
    // What an earlier attempt already sent (the SMTP server failed on a later one): not sent twice.
    const done = new Set<string>((activity.info.heartbeatDetails as string[] | undefined) ?? []);
    const host = /@([^>\s]+)>?\s*$/.exec(email.from)?.[1] ?? 'agent.invalid';
    const thread = `<conversation-${digest(request.workflowId)}@${host}>`;
    const base = deps.config.publicUrl.replace(/\/$/, '');
    let sent = 0;
    for (const gate of request.gates) {
      for (const person of mailRecipients(gate, deps.config.policy.users)) {
        const mark = `${gate.id} ${person.address.toLowerCase()}`;
        if (done.has(mark)) continue;
        const expiresAt = Math.min(Date.now() + email.linkTtlMs, gate.expiresAt ?? Infinity);
        const token = signGateLink(deps.credentials().keys.signing, {
          workflowId: request.workflowId,
          gateId: gate.id,
          userId: person.userId,
          expiresAt,
          nonce: randomBytes(18).toString('base64url'),
        });
        const link = `${base}/email/gate?t=${encodeURIComponent(token)}`;
        const words = gateInterrupt(gate, person.userId, () => `${base}/`).message ?? promptHeadline(gate);
        const until = new Date(expiresAt).toISOString().slice(0, 16).replace('T', ' ');
        const note = `Opening the link decides nothing: the page shows the request, and you choose there, signed in. It works once, until ${until} UTC.`;
        await transport.sendMail({
          from: email.from,
          to: person.address,
          subject: promptHeadline(gate),
          messageId: `<gate-${gate.id}-${digest(person.address.toLowerCase())}@${host}>`,
          inReplyTo: thread,
          references: [thread],
          text: `${words}\n\nDecide here: ${link}\n\n${note}\n`,
          html: `${words
            .split('\n')
            .map((line) => `<p>${escapeHtml(line)}</p>`)
            .join(
              '',
            )}<p><a href="${escapeHtml(link)}">Open the decision page</a></p><p style="color:#666">${escapeHtml(note)}</p>`,
          headers: { 'Auto-Submitted': 'auto-generated' },
        });
        sent++;
        done.add(mark);
        activity.heartbeat([...done]);
        deps.log.info('gate mailed', { workflowId: request.workflowId, gateId: gate.id, to: person.userId });
      }
    }
    return { sent };
  };
}

/** Gates one digest lists at most (the newest waiting conversations first). */
const DIGEST_CONVERSATIONS = 50;

/**
 * The daily digest (workflows/email/digest.ts): each person with an address is mailed what waits on them, found by
 * their own ids in visibility (`AgentDeciders`, as "Needs you" finds it), each gate with its own single-use link;
 * someone nothing waits on gets no mail. Returns the hour of the next one, or `off` when the digest was turned off.
 */
export function digestMailer(deps: {
  config: AppConfig;
  client: Client;
  credentials: () => CredentialService;
  log: Logger;
}) {
  let transport: Transporter | undefined;
  return async function mailDigests(): Promise<{ at?: string; off?: true; people: number; gates: number }> {
    const email = deps.config.email;
    if (!email?.digestAt) return { off: true, people: 0, gates: 0 };
    transport ??= nodemailer.createTransport(email.smtpUrl);
    const activity = Context.current();
    const done = new Set<string>((activity.info.heartbeatDetails as string[] | undefined) ?? []);
    const base = deps.config.publicUrl.replace(/\/$/, '');
    const users = deps.config.policy.users;
    let people = 0;
    let total = 0;
    for (const [name, person] of Object.entries(users)) {
      if (!person.email || done.has(name)) continue;
      const ids = aliasesOf(name, users);
      const query = `ExecutionStatus = 'Running' AND AgentDeciders IN (${ids.map((id) => `'${id.replace(/'/g, '')}'`).join(', ')})`;
      const lines: string[] = [];
      let found = 0;
      for await (const execution of deps.client.workflow.list({ query, pageSize: DIGEST_CONVERSATIONS })) {
        if (++found > DIGEST_CONVERSATIONS) break;
        for (const gate of readMemoGates(execution.memo).gates) {
          const mine =
            gate.kind === 'credential'
              ? ids.includes(gate.requesterId)
              : ids.some((id) => mayDecide(gate as Gate, id));
          if (!mine) continue;
          const token = signGateLink(deps.credentials().keys.signing, {
            workflowId: execution.workflowId,
            gateId: gate.id,
            userId: name,
            expiresAt: Math.min(Date.now() + email.linkTtlMs, gate.expiresAt ?? Infinity),
            nonce: randomBytes(18).toString('base64url'),
          });
          const what =
            gate.kind === 'approval' && !isBudgetGate(gate)
              ? `\n  ${(gate as Gate & { subject: string }).subject}`
              : '';
          lines.push(
            `- ${promptHeadline(gate as Gate)}${what}\n  ${base}/email/gate?t=${encodeURIComponent(token)}`,
          );
        }
      }
      activity.heartbeat([...done]);
      if (!lines.length) continue;
      const count = lines.length;
      // Never cut silently: more conversations wait than one digest lists.
      if (found > DIGEST_CONVERSATIONS)
        lines.push(
          `More conversations wait on you than this digest lists: "Needs you" at ${base}/ shows them all.`,
        );
      const note =
        'Opening a link decides nothing: each page shows the request, and you choose there, signed in.';
      await transport.sendMail({
        from: email.from,
        to: person.email,
        subject: `Needs you: ${count}${found > DIGEST_CONVERSATIONS ? '+' : ''} ${count === 1 ? 'decision waits' : 'decisions wait'}`,
        text: `${lines.join('\n\n')}\n\n${note}\n`,
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
      people++;
      total += count;
      done.add(name);
      activity.heartbeat([...done]);
    }
    deps.log.info('e-mail digest sent', { people, gates: total });
    return { at: email.digestAt, people, gates: total };
  };
}

/**
 * E-mail as a channel of every gate, against a real SMTP server (`smtp-server`, mails parsed with `mailparser`): a
 * gate is mailed to each person who may decide it, in one thread per conversation, with a link to a confirm page;
 * a link-scanner bot that opens every link of every mail (signed in or not) decides nothing; only a POST from the page,
 * as the person the mail was sent to, decides, once; the SMTP password is in no workflow history.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { MockActivityEnvironment } from '@temporalio/testing';
import { digestMailer } from '../../activities/gate-mail';
import { loadConfig } from '../../infra/config';
import { CredentialService } from '../../infra/credentials/service';
import { createLogger } from '../../infra/log';
import { nextDigestAt } from '../../workflows/email/digest';
import { Tally } from '../chaos/summary';
import { FakeSmtp, linksIn, mailTo, openMailLink, postMailPage } from '../helpers/fake-smtp';
import { historyText } from '../helpers/history';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let stack: Stack;
const smtp = new FakeSmtp();
const mails = smtp.mails;
const SMTP_PASSWORD = smtp.password;
const tally = new Tally();

beforeAll(async () => {
  await smtp.start();
  env = await startTestTemporal();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      providers: {
        weather: { type: 'api_key', displayName: 'Weather', header: 'X-Api-Key', apiHosts: ['127.0.0.1:9'] },
      },
      approvers: ['bob'],
      users: {
        alice: { email: 'alice@example.com' },
        bob: { email: 'bob@example.com' },
        mallory: { email: 'mallory@example.com' },
      },
    },
    env: smtp.env(),
  });
});

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('email: link scanners and other people decide nothing');
  } finally {
    await stack?.stop();
    await env?.teardown();
    smtp.stop();
  }
});

const to = mailTo;
const lines = (contextId: string, file: string) => {
  const full = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${contextId}`), file);
  return existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length : 0;
};

const post = (
  link: string,
  user: string | undefined,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) => postMailPage(stack, link, user, fields, headers);
const open = (link: string, user: string | undefined, method = 'GET') =>
  openMailLink(stack, link, user, method);

describe('e-mail as a channel of every gate', () => {
  it('mails an approval to who may decide it; scanners decide nothing; the page decides once, as its person', async () => {
    const contextId = `mail-${randomUUID().slice(0, 8)}`;
    await stack.web.say(contextId, 'run `echo mailed >> mail.txt`', 'alice');
    const gate = await stack.web.pendingGate(contextId, 'alice');
    const mailed = await until(
      'the two mails',
      () => (mails.filter((m) => m.subject?.includes('shell_execute')).length >= 2 ? mails : undefined),
      { timeoutMs: 60_000 },
    );
    const forGate = mailed.filter((m) => m.subject?.includes('shell_execute'));
    expect(forGate.map(to).sort()).toEqual(['alice@example.com', 'bob@example.com']);
    const bobs = forGate.find((m) => to(m) === 'bob@example.com')!;
    expect(bobs.subject).toBe('Approval needed: shell_execute requested by @alice');
    expect(bobs.text).toContain('echo mailed >> mail.txt');
    expect(bobs.html).toContain('Open the decision page');
    expect(bobs.from?.text).toContain('agent@agent.example');
    // One conversation, one thread.
    expect(new Set(forGate.map((m) => JSON.stringify(m.references)))).toHaveLength(1);
    expect(forGate[0]!.inReplyTo).toBe(forGate[0]!.references);
    const [bobLink] = linksIn(bobs).filter((l) => l.includes('/email/gate'));
    const [aliceLink] = linksIn(forGate.find((m) => to(m) === 'alice@example.com')!).filter((l) =>
      l.includes('/email/gate'),
    );
    expect(bobLink).toBeDefined();

    // The link scanner: every link of every mail, opened with GET and HEAD, signed in or not, by anyone.
    for (const mail of forGate)
      for (const link of linksIn(mail))
        for (const user of [undefined, 'mallory', 'bob', 'alice'])
          for (const method of ['GET', 'HEAD']) {
            const opened = await open(link, user, method);
            tally.attempt(opened.status < 500, () => `${method} ${link} as ${user}: ${opened.status}`);
          }
    const page = await open(bobLink!, 'bob');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Approve');
    expect(page.text).toContain('Always allow here');
    expect(page.text).toContain('Edit &amp; approve');
    expect(page.text).toContain('echo mailed');
    expect((await open(bobLink!, 'mallory')).status).toBe(403);
    expect((await open(bobLink!, undefined)).status).toBe(401);
    const still = await stack.web.pendingGate(contextId, 'alice');
    tally.attempt(still.id === gate.id && still.status === 'pending', () => 'a GET decided the gate');
    tally.attempt(lines(contextId, 'mail.txt') === 0, () => 'the command ran after the scanner');

    // Posts that are not the page's, or not its person's, decide nothing.
    const refusedPosts: [string, () => Promise<{ status: number }>][] = [
      ['a post without Origin', () => post(bobLink!, 'bob', { choice: 'approve' }, { origin: '' })],
      [
        'a post from another site',
        () => post(bobLink!, 'bob', { choice: 'approve' }, { origin: 'https://evil.example' }),
      ],
      [
        'a post as JSON',
        () => post(bobLink!, 'bob', { choice: 'approve' }, { 'content-type': 'application/json' }),
      ],
      ['a post by someone else', () => post(bobLink!, 'mallory', { choice: 'approve' })],
      [
        "a post by the requester with the approver's link",
        () => post(bobLink!, 'alice', { choice: 'approve' }),
      ],
      ['a post without sign-in', () => post(bobLink!, undefined, { choice: 'approve' })],
      [
        'a post with a forged link',
        () => post(bobLink!.replace(/t=[^&]{10}/, 't=AAAAAAAAAA'), 'bob', { choice: 'approve' }),
      ],
      ['an answer to an approval', () => post(bobLink!, 'bob', { choice: 'answer' })],
      ['a choice no page offers', () => post(bobLink!, 'bob', { choice: 'delegate' })],
      ['edited arguments that are not JSON', () => post(bobLink!, 'bob', { choice: 'edit', args: '{nope' })],
    ];
    for (const [what, attempt] of refusedPosts) {
      const answer = await attempt();
      tally.attempt(answer.status >= 400, () => `${what} was taken: ${answer.status}`);
    }
    tally.attempt(
      (await stack.web.pendingGate(contextId, 'alice')).status === 'pending',
      () => 'a refused post decided the gate',
    );

    const decided = await post(bobLink!, 'bob', { choice: 'approve' });
    expect(decided.status).toBe(200);
    expect(decided.text).toMatch(/approved by @bob/);
    await stack.web.waitFor(contextId, (v) => v.status === 'idle', 'the approved command', 60_000, 'alice');
    expect(lines(contextId, 'mail.txt')).toBe(1);
    const replay = await post(bobLink!, 'bob', { choice: 'approve' });
    tally.attempt(replay.status === 409, () => `the same link posted again: ${replay.status}`);
    const late = await post(aliceLink!, 'alice', { choice: 'deny' });
    tally.attempt(
      late.status === 409 && late.text.includes('Nothing waits'),
      () => `a late post: ${late.status}`,
    );
    expect(lines(contextId, 'mail.txt')).toBe(1);

    // A second gate in the same conversation is in the same thread.
    await stack.web.say(contextId, 'run `echo again >> mail.txt`', 'alice');
    const second = await until(
      'the second gate mails',
      () => {
        const more = mails.filter((m) => m.subject?.includes('shell_execute'));
        return more.length >= 4 ? more : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(new Set(second.map((m) => JSON.stringify(m.references)))).toHaveLength(1);

    // Decided from the page while no worker runs: taken, and the command runs once the worker is back.
    const againLink = linksIn(second.filter((m) => to(m) === 'bob@example.com').at(-1)!).find((l) =>
      l.includes('/email/gate'),
    )!;
    await stack.worker.kill('SIGKILL');
    const offline = await post(againLink, 'bob', { choice: 'approve' });
    expect(offline.status).toBe(202);
    expect(offline.text).toContain('Your decision was sent');
    expect(lines(contextId, 'mail.txt')).toBe(1);
    await stack.restartWorker();
    await until('the second command', () => lines(contextId, 'mail.txt') === 2 || undefined, {
      timeoutMs: 90_000,
    });
    await stack.web.waitFor(contextId, (v) => v.status === 'idle', 'the second answer', 60_000, 'alice');
    expect(lines(contextId, 'mail.txt')).toBe(2);

    // The SMTP password reached the SMTP server only: no history has it.
    const history = historyText(
      await env.client.workflow.getHandle(`session:web:${contextId}`).fetchHistory(),
    );
    expect(history).not.toContain(SMTP_PASSWORD);
    expect(stack.worker.output).not.toContain(SMTP_PASSWORD);
  });

  it('mails a sign-in only to who asked; its page holds their own Connect link', async () => {
    const contextId = `mail-${randomUUID().slice(0, 8)}`;
    const before = mails.length;
    await stack.web.say(contextId, 'fetch http://127.0.0.1:9/forecast with weather', 'alice');
    const [mail] = await until('the sign-in mail', () => {
      const fresh = mails.slice(before).filter((m) => m.subject?.includes('Weather'));
      return fresh.length ? fresh : undefined;
    });
    expect(to(mail!)).toBe('alice@example.com');
    const link = linksIn(mail!).find((l) => l.includes('/email/gate'))!;
    const page = await open(link, 'alice');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Connect Weather');
    expect((await open(link, 'bob')).status).toBe(403);
  });

  it("mails a mission run's gate to its owner; the page decides it, and the run goes on", async () => {
    const contextId = `mail-${randomUUID().slice(0, 8)}`;
    await stack.web.say(
      contextId,
      'call mission_create {"name": "mailed mission", "goal": "run `echo mission-mailed`", "cadence": "manual"}',
      'alice',
    );
    await stack.web.waitFor(contextId, (v) => v.status === 'idle', 'the mission created', 60_000, 'alice');
    const before = mails.length;
    await stack.web.say(contextId, 'call mission_fire "mailed mission"', 'alice');
    const [mail] = await until(
      'the run gate mail',
      () => {
        const fresh = mails
          .slice(before)
          .filter((m) => m.subject?.includes('shell_execute') && to(m) === 'alice@example.com');
        return fresh.length ? fresh : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(mail!.text).toContain('echo mission-mailed');
    const link = linksIn(mail!).find((l) => l.includes('/email/gate'))!;
    const decided = await post(link, 'alice', { choice: 'approve' });
    expect(decided.status).toBe(200);
    expect(decided.text).toMatch(/approved by @alice/);
    await stack.web.waitFor(
      contextId,
      (v) =>
        v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('**mailed mission** (run 1)')),
      'the run report',
      90_000,
      'alice',
    );
  }, 180_000);

  it('edits and approves from the page, and answers a question from its own page', async () => {
    const contextId = `mail-${randomUUID().slice(0, 8)}`;
    const before = mails.length;
    await stack.web.say(contextId, 'run `echo original >> edit.txt`', 'alice');
    const [mail] = await until('the approval mail', () => {
      const fresh = mails.slice(before).filter((m) => to(m) === 'bob@example.com');
      return fresh.length ? fresh : undefined;
    });
    const link = linksIn(mail!).find((l) => l.includes('/email/gate'))!;
    const edited = await post(link, 'bob', {
      choice: 'edit',
      args: JSON.stringify({ command: 'echo edited >> edit.txt' }),
    });
    expect(edited.status).toBe(200);
    await stack.web.waitFor(contextId, (v) => v.status === 'idle', 'the edited command', 60_000, 'alice');
    const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${contextId}`), 'edit.txt');
    expect(readFileSync(file, 'utf8').trim()).toBe('edited');

    const asked = mails.length;
    await stack.web.say(contextId, 'ask one', 'alice');
    const [question] = await until('the question mail', () => {
      const fresh = mails.slice(asked).filter((m) => to(m) === 'alice@example.com');
      return fresh.length ? fresh : undefined;
    });
    const questionLink = linksIn(question!).find((l) => l.includes('/email/gate'))!;
    const form = await open(questionLink, 'alice');
    const option = /name="q0" value="([^"]+)"/.exec(form.text)?.[1];
    expect(option).toBeDefined();
    const answered = await post(questionLink, 'alice', { choice: 'answer', q0: option! });
    expect(answered.status).toBe(200);
    expect(answered.text).toMatch(/answered by @alice/);
    await stack.web.waitFor(contextId, (v) => v.status === 'idle', 'the answer', 60_000, 'alice');
  }, 180_000);

  it('mails each person a daily digest of what waits on them, each gate with its own link', async () => {
    const contextId = `mail-${randomUUID().slice(0, 8)}`;
    await stack.web.say(contextId, 'run `echo digest >> digest.txt`', 'alice');
    const gate = await stack.web.pendingGate(contextId, 'alice');
    // The digest's activity, run as the daily workflow runs it (its timer is workflows/email/digest.ts's, unit-tested).
    const config = loadConfig({ ...stack.env, EMAIL_DIGEST: '08:00' });
    const mailDigests = digestMailer({
      config,
      client: env.client,
      credentials: () => CredentialService.fromConfig(config),
      log: createLogger('test', 'warn'),
    });
    const digest = await until(
      'the digest',
      async () => {
        const before = mails.length;
        const sent = (await new MockActivityEnvironment().run(mailDigests)) as Awaited<
          ReturnType<typeof mailDigests>
        >;
        const fresh = mails
          .slice(before)
          .find(
            (m) =>
              to(m) === 'bob@example.com' &&
              m.subject?.startsWith('Needs you') &&
              m.text?.includes('echo digest'),
          );
        return fresh ? { sent, mail: fresh } : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(digest.sent.at).toBe('08:00');
    expect(digest.mail.subject).toMatch(/^Needs you: \d+ decisions? waits?$/);
    const link = linksIn(digest.mail).find((l) => l.includes('/email/gate') && l.length > 0)!;
    const page = await open(
      linksIn(digest.mail)
        .filter((l) => l.includes('/email/gate'))
        .find(() => true)!,
      'bob',
    );
    expect(page.status).toBe(200);
    expect(link).toBeDefined();
    // Mallory, whom nothing waits on, gets no digest.
    expect(mails.some((m) => to(m) === 'mallory@example.com' && m.subject?.startsWith('Needs you'))).toBe(
      false,
    );
    // The gate it named is still open: a digest decides nothing.
    expect((await stack.web.pendingGate(contextId, 'alice')).id).toBe(gate.id);
  });

  it('times the digest: the next HH:MM UTC after now', () => {
    const at = Date.UTC(2026, 10, 30, 9, 30);
    expect(new Date(nextDigestAt('08:00', at)).toISOString()).toBe('2026-12-01T08:00:00.000Z');
    expect(new Date(nextDigestAt('10:15', at)).toISOString()).toBe('2026-11-30T10:15:00.000Z');
  });
});

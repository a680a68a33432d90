/**
 * A real SMTP server for the tests (`smtp-server`), each mail parsed with `mailparser` as a mail client would read it.
 * It takes only the agent's own credentials, as a provider's relay does, so a wrong SMTP_URL fails as it would there.
 */
import { randomUUID } from 'node:crypto';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './processes';
import type { Stack } from './stack';

export class FakeSmtp {
  readonly mails: ParsedMail[] = [];
  readonly password = `smtp-secret-${randomUUID()}`;
  private server: SMTPServer | undefined;
  private port = 0;

  async start(): Promise<void> {
    this.port = await freePort();
    this.server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth: (auth, _session, callback) => {
        if (auth.username === 'agent' && auth.password === this.password) callback(null, { user: 'agent' });
        else callback(new Error('wrong SMTP credentials'));
      },
      onData: (stream, _session, callback) => {
        simpleParser(stream).then(
          (mail) => {
            this.mails.push(mail);
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** The gateway's and worker's settings for this server. */
  env(): Record<string, string> {
    return {
      SMTP_URL: `smtp://agent:${this.password}@127.0.0.1:${this.port}`,
      EMAIL_FROM: 'Agent <agent@agent.example>',
    };
  }

  stop(): void {
    this.server?.close();
  }
}

/** Every link of a mail, text and HTML parts, as a link scanner finds them. */
export const linksIn = (mail: ParsedMail) => [
  ...new Set(
    [...`${mail.text ?? ''} ${mail.html || ''}`.matchAll(/https?:\/\/[^\s"'<>]+/g)].map((m) =>
      m[0].replace(/&amp;/g, '&'),
    ),
  ),
];

/** Who a mail went to, as one string. */
export const mailTo = (mail: ParsedMail) =>
  (Array.isArray(mail.to) ? mail.to : [mail.to]).map((a) => a?.text).join(',');

/** The link of a mail to its decision page. */
export const gateLinkIn = (mail: ParsedMail) => linksIn(mail).find((l) => l.includes('/email/gate'));

/** The decision page's form, posted as a browser posts it: from the page's origin, as `user`. */
export async function postMailPage(
  stack: Stack,
  link: string,
  user: string | undefined,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const url = new URL(link);
  const response = await fetch(`http://127.0.0.1:${stack.port}/email/gate`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: url.origin,
      host: url.host,
      ...(user ? stack.web.headers(user) : {}),
      ...headers,
    },
    body: new URLSearchParams({ t: url.searchParams.get('t')!, ...fields }).toString(),
  });
  return { status: response.status, text: await response.text() };
}

/** A mail's link opened as a browser or a scanner opens it (`user` signed in, or nobody). */
export async function openMailLink(stack: Stack, link: string, user: string | undefined, method = 'GET') {
  const url = new URL(link);
  const response = await fetch(`http://127.0.0.1:${stack.port}${url.pathname}${url.search}`, {
    method,
    headers: { host: url.host, ...(user ? stack.web.headers(user) : {}) },
    redirect: 'manual',
  });
  return { status: response.status, text: method === 'HEAD' ? '' : await response.text() };
}

/** The web chat's JSON API as a test uses it: exactly the requests the page makes. */
import { randomUUID } from 'node:crypto';
import type { Gate, SessionView } from '../../workflows/session/contract';

/**
 * How the client proves who it is: as a signing-in proxy would (the stack's default: the trusted header from
 * 127.0.0.1), or with local mode's secret (`Authorization: Bearer`), where every request is "local".
 */
export type WebCredentials = { userHeader: string } | { bearer: string };

export class WebClient {
  constructor(
    readonly baseUrl: string,
    readonly credentials: WebCredentials = { userHeader: 'x-forwarded-user' },
  ) {}

  headers(user: string): Record<string, string> {
    return 'bearer' in this.credentials
      ? { authorization: `Bearer ${this.credentials.bearer}` }
      : { [this.credentials.userHeader]: user };
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    user = 'alice',
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON the API returned
  ): Promise<{ status: number; body: any }> {
    const response = await fetch(`${this.baseUrl}/api${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...this.headers(user) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json().catch(() => undefined) };
  }

  async say(sessionId: string, text: string, user = 'alice') {
    return await this.request(
      'POST',
      `/sessions/${sessionId}/messages`,
      { text, messageId: randomUUID() },
      user,
    );
  }

  async decide(
    sessionId: string,
    gateId: string,
    choice: string,
    extra: Record<string, unknown> = {},
    user = 'alice',
  ) {
    return await this.request(
      'POST',
      '/decisions',
      { workflowId: `session:web:${sessionId}`, gateId, choice, ...extra },
      user,
    );
  }

  async waitFor(
    sessionId: string,
    predicate: (view: SessionView) => boolean,
    what: string,
    timeoutMs = 60_000,
    /** Who looks: only the session's owner (and approvers) can see it. */
    user = 'alice',
  ): Promise<SessionView> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      const response = await this.request('GET', `/sessions/${sessionId}`, undefined, user).catch(
        () => undefined,
      );
      last = response?.body;
      if (response?.status === 200 && predicate(response.body as SessionView))
        return response.body as SessionView;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 2000)}`);
  }

  async pendingGate(sessionId: string, user = 'alice'): Promise<Gate> {
    const view = await this.waitFor(
      sessionId,
      (v) => v.gates.some((g) => g.status === 'pending'),
      'a pending gate',
      60_000,
      user,
    );
    return view.gates.find((g) => g.status === 'pending')!;
  }

  async answered(sessionId: string, user = 'alice'): Promise<SessionView> {
    return await this.waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.queued === 0 && v.transcript.at(-1)?.role === 'assistant',
      'an answer',
      60_000,
      user,
    );
  }
}

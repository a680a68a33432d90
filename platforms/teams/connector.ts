/**
 * The Bot Connector REST API, as the bot calls it: an app token from the Microsoft identity platform (client
 * credentials, scope `https://api.botframework.com/.default`, kept until shortly before it expires), then
 * `POST {serviceUrl}/v3/conversations/{id}/activities` and `PUT …/activities/{activityId}`. The app secret goes to
 * the token endpoint only; the token only to a conversation's own service URL.
 */
import type { TeamsConversation } from './ids';

export interface Activity {
  type: 'message' | 'typing';
  text?: string;
  textFormat?: 'markdown' | 'plain';
  attachments?: { contentType: string; content: unknown }[];
  entities?: unknown[];
}

export class ConnectorError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}

export class Connector {
  private token: { value: string; until: number } | undefined;
  private fetching: Promise<string> | undefined;

  constructor(private readonly options: { appId: string; appPassword: string; tokenUrl: string }) {}

  private async appToken(): Promise<string> {
    if (this.token && Date.now() < this.token.until) return this.token.value;
    this.fetching ??= (async () => {
      const response = await fetch(this.options.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: this.options.appId,
          client_secret: this.options.appPassword,
          scope: 'https://api.botframework.com/.default',
        }),
        signal: AbortSignal.timeout(15_000),
      });
      if (!response.ok)
        throw new ConnectorError(`the token endpoint answered ${response.status}`, response.status);
      const body = (await response.json()) as { access_token?: string; expires_in?: number };
      if (!body.access_token) throw new Error('the token endpoint gave no access_token');
      this.token = {
        value: body.access_token,
        until: Date.now() + ((body.expires_in ?? 3_600) - 300) * 1_000,
      };
      return body.access_token;
    })().finally(() => (this.fetching = undefined));
    return await this.fetching;
  }

  private async call(method: 'POST' | 'PUT', url: string, activity: Activity): Promise<{ id?: string }> {
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${await this.appToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify(activity),
      signal: AbortSignal.timeout(20_000),
    });
    if (response.status === 401) this.token = undefined; // asked again with a fresh token on the next attempt
    if (!response.ok)
      throw new ConnectorError(`the Bot Connector answered ${response.status} to ${method}`, response.status);
    const text = await response.text();
    return text ? (JSON.parse(text) as { id?: string }) : {};
  }

  private activities(where: TeamsConversation): string {
    return `${where.serviceUrl.replace(/\/+$/, '')}/v3/conversations/${encodeURIComponent(where.conversationId)}/activities`;
  }

  async send(where: TeamsConversation, activity: Activity): Promise<string | undefined> {
    return (await this.call('POST', this.activities(where), activity)).id;
  }

  async update(where: TeamsConversation, activityId: string, activity: Activity): Promise<void> {
    await this.call('PUT', `${this.activities(where)}/${encodeURIComponent(activityId)}`, activity);
  }
}

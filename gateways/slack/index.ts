/** The Slack platform: a Bolt app on Bolt's own HTTP receiver, mounted at /slack/events when configured. */
import type { RequestListener } from 'node:http';
import { App, HTTPReceiver, LogLevel } from '@slack/bolt';
import type { GatewayDeps } from '../platform';
import { registerSlackListeners } from './inbound';
import { SlackSessions } from './sessions';

export function createSlackListener(deps: GatewayDeps): RequestListener | undefined {
  const slack = deps.config.slack;
  if (!slack) return undefined;
  if (!slack.signingSecret) {
    throw new Error(
      'SLACK_SIGNING_SECRET is not set: copy it from your Slack app\'s "Basic Information" page (or unset SLACK_BOT_TOKEN to turn Slack off)',
    );
  }
  // The receiver verifies signatures (401 on a bad or stale one), answers url_verification and ssl_check.
  const receiver = new HTTPReceiver({
    signingSecret: slack.signingSecret,
    endpoints: ['/slack/events'],
    logLevel: LogLevel.WARN,
  });
  const app = new App({
    token: slack.botToken,
    receiver,
    tokenVerificationEnabled: false,
    logLevel: LogLevel.WARN,
    ...(slack.apiUrl ? { clientOptions: { slackApiUrl: slack.apiUrl } } : {}),
  });
  registerSlackListeners(app, new SlackSessions(deps.client, deps.config.temporal.taskQueue), deps.log);
  app.error(async (error) => deps.log.error('slack listener failed', { error: error.message }));
  return receiver.requestListener;
}

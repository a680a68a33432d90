/**
 * The Slack platform. Over HTTP (the default): a Bolt app on Bolt's own HTTP receiver at /slack/events.
 * With SLACK_APP_TOKEN: Socket Mode, for installs that cannot expose a public URL. Same listeners either way.
 */
import { App, HTTPReceiver, LogLevel, SocketModeReceiver } from '@slack/bolt';
import { ErrorCode } from '../../common/errors';
import type { GatewayDeps, NodePlatform } from '../../gateways/platform';
import { guardSlackRequests } from './guard';
import { registerSlackListeners } from './inbound';
import { CHAT_DEADLINE_MS, Sessions } from '../../gateways/sessions';
import { personalConnect } from '../../gateways/oauth/links';

export function createSlackPlatform(deps: GatewayDeps): NodePlatform | undefined {
  const slack = deps.config.slack;
  if (!slack) return undefined;
  const clientOptions = slack.apiUrl ? { slackApiUrl: slack.apiUrl } : {};
  const connect = personalConnect(deps);
  const sessions = new Sessions(deps.client, deps.config.temporal.taskQueue, 'slack', CHAT_DEADLINE_MS);
  const assistant = slack.assistant ? { prompts: deps.config.policy.assistantPrompts } : undefined;
  const common = {
    token: slack.botToken,
    tokenVerificationEnabled: false,
    logLevel: LogLevel.WARN,
    clientOptions,
  };

  if (slack.appToken) {
    const receiver = new SocketModeReceiver({
      appToken: slack.appToken,
      logLevel: LogLevel.WARN,
      installerOptions: { clientOptions },
    });
    const app = new App({ ...common, receiver });
    registerSlackListeners(app, sessions, deps.log, connect, false, assistant);
    app.error(async (error) => deps.log.error('slack listener failed', { error: error.message }));
    return {
      start: async () => {
        await app.start();
        deps.log.info('slack socket mode connected');
      },
      stop: () => app.stop().then(() => undefined),
    };
  }

  if (!slack.signingSecret) {
    throw new Error(
      'SLACK_SIGNING_SECRET is not set: copy it from your Slack app\'s "Basic Information" page (or set SLACK_APP_TOKEN for Socket Mode, or unset SLACK_BOT_TOKEN to turn Slack off)',
    );
  }
  // The receiver verifies signatures (401 on a bad or stale one), answers url_verification and ssl_check.
  // processBeforeResponse: the HTTP answer waits for the listener (Bolt acks events before listeners run), so
  // an event whose message Temporal did not take is answered 500 and Slack delivers it again. Listeners stay
  // within Slack's 3 seconds: every Temporal call has a 2-second deadline.
  const receiver = new HTTPReceiver({
    signingSecret: slack.signingSecret,
    endpoints: ['/slack/events'],
    logLevel: LogLevel.WARN,
    processBeforeResponse: true,
  });
  const app = new App({ ...common, receiver });
  registerSlackListeners(app, sessions, deps.log, connect, true, assistant);
  app.error(async (error) => {
    // Rethrown, it becomes the 500 that makes Slack retry; anything else is logged and answered 200.
    if (error.code === ErrorCode.TemporalUnreachable) throw error;
    deps.log.error('slack listener failed', { error: error.message });
  });
  return { prefix: '/slack/', listener: guardSlackRequests(receiver.requestListener, slack.signingSecret) };
}

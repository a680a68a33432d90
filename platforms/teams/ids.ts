/**
 * Teams coordinates <-> session workflow ids. One Teams conversation (a personal chat, a group chat, or a channel
 * thread: its conversation id names the thread) is one session. The Bot Connector endpoint that serves it (the
 * activity's `serviceUrl`, signed into the caller's token) goes with it, so the worker knows where to answer:
 * `session:teams:<serviceUrl, base64url>.<conversation id, base64url>`.
 */
const PREFIX = 'session:teams:';
const MAX_CONVERSATION_ID = 400;

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const unb64 = (text: string) => Buffer.from(text, 'base64url').toString('utf8');

export interface TeamsConversation {
  serviceUrl: string;
  conversationId: string;
}

export function teamsSessionWorkflowId(where: TeamsConversation): string {
  return `${PREFIX}${b64(where.serviceUrl)}.${b64(where.conversationId)}`;
}

export function parseTeamsSessionId(workflowId: string): TeamsConversation | undefined {
  if (!workflowId.startsWith(PREFIX)) return undefined;
  const [service, conversation, ...rest] = workflowId.slice(PREFIX.length).split('.');
  if (!service || !conversation || rest.length) return undefined;
  const where = { serviceUrl: unb64(service), conversationId: unb64(conversation) };
  return validConversation(where) ? where : undefined;
}

/** A service URL and conversation id this runtime answers: https (or loopback http, for a local emulator), bounded. */
export function validConversation(where: Partial<TeamsConversation>): where is TeamsConversation {
  const { serviceUrl, conversationId } = where;
  if (typeof conversationId !== 'string' || !conversationId || conversationId.length > MAX_CONVERSATION_ID)
    return false;
  if ([...conversationId].some((c) => c.charCodeAt(0) < 0x20)) return false;
  if (typeof serviceUrl !== 'string' || serviceUrl.length > 300) return false;
  try {
    const url = new URL(serviceUrl);
    if (url.username || url.password) return false;
    return (
      url.protocol === 'https:' ||
      (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    );
  } catch {
    return false;
  }
}

export { teamsUserId } from '../../common/chat-ids';

/**
 * "Connect <provider>" links: a signed ticket naming the person and the provider. A web link is opened by
 * the signed-in person it names; a chat link is shown only to the clicker, works once and expires in ten
 * minutes (README "Security model").
 */
import { randomBytes } from 'node:crypto';
import type { CredentialService } from '../../infra/credentials/service';
import { signTicket, type TicketChannel } from '../../infra/credentials/signed';
import type { GatewayDeps } from '../platform';

export const WEB_TICKET_TTL_MS = 24 * 3_600_000;
export const CHAT_TICKET_TTL_MS = 10 * 60_000;

export function connectUrl(
  credentials: CredentialService,
  publicUrl: string,
  userId: string,
  provider: string,
  options: {
    channel: TicketChannel;
    /** A fixed expiry (e.g. the gate's) keeps a web link stable while it is shown. */
    expiresAt?: number | undefined;
  },
): string {
  const single = options.channel !== 'web';
  const ticket = signTicket(credentials.keys.signing, {
    userId,
    provider,
    expiresAt: single
      ? Date.now() + CHAT_TICKET_TTL_MS
      : (options.expiresAt ?? Date.now() + WEB_TICKET_TTL_MS),
    channel: options.channel,
    ...(single ? { nonce: randomBytes(18).toString('base64url') } : {}),
  });
  return `${publicUrl.replace(/\/$/, '')}/oauth/${encodeURIComponent(provider)}/start?ticket=${encodeURIComponent(ticket)}`;
}

/** For chat buttons: the clicker's own single-use link, or undefined when the provider is not configured. */
export function personalConnect(
  deps: GatewayDeps,
): (userId: string, provider: string) => { url: string; providerName: string } | undefined {
  return (userId, provider) => {
    const found = deps.credentials().provider(provider);
    return found
      ? {
          url: connectUrl(deps.credentials(), deps.config.publicUrl, userId, provider, { channel: 'chat' }),
          providerName: found.displayName,
        }
      : undefined;
  };
}

/** "Connect <provider>" links: a signed ticket naming the person and the provider, valid for a day. */
import type { CredentialService } from '../../common/credentials/service';
import type { GatewayDeps } from '../platform';
import { signTicket } from '../../common/credentials/signed';

export const TICKET_TTL_MS = 24 * 3_600_000;

export function connectUrl(
  credentials: CredentialService,
  publicUrl: string,
  userId: string,
  provider: string,
  /** A fixed expiry (e.g. the gate's) keeps the link stable while it is shown. */
  expiresAt = Date.now() + TICKET_TTL_MS,
): string {
  const ticket = signTicket(credentials.keys.signing, { userId, provider, expiresAt });
  return `${publicUrl.replace(/\/$/, '')}/oauth/${encodeURIComponent(provider)}/start?ticket=${encodeURIComponent(ticket)}`;
}

/** For chat buttons: the clicker's own link to connect a provider, or undefined when it is not configured. */
export function personalConnect(
  deps: GatewayDeps,
): (userId: string, provider: string) => { url: string; providerName: string } | undefined {
  return (userId, provider) => {
    const found = deps.credentials().provider(provider);
    return found
      ? {
          url: connectUrl(deps.credentials(), deps.config.publicUrl, userId, provider),
          providerName: found.displayName,
        }
      : undefined;
  };
}

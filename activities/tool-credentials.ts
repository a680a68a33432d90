/**
 * What every tool that needs a credential does before it runs (built-ins and MCP servers alike): the
 * person's header to send, or the result that ends the call without running it — a credential gate
 * (`credential_required`) when they have not connected the provider, an error when it is not configured.
 */
import type { CredentialService } from '../common/credentials/service';
import type { ToolRunResult } from './types';

export type ToolAuthorization =
  { ok: true; header: string; value: string } | { ok: false; result: ToolRunResult };

export async function authorizeTool(
  credentials: CredentialService,
  userId: string,
  providerName: string,
): Promise<ToolAuthorization> {
  const checked = await credentials.authorization(userId, providerName);
  if (checked.ok) return { ok: true, header: checked.header, value: checked.value };
  const provider = credentials.provider(providerName);
  if (!provider) return { ok: false, result: { status: 'error', content: `${checked.message}.` } };
  return {
    ok: false,
    result: {
      status: 'credential_required',
      content: `${checked.message}: the user must connect ${provider.displayName} first.`,
      credential: { provider: providerName, providerName: provider.displayName, kind: provider.kind },
    },
  };
}

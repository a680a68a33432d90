/**
 * What every tool that needs a credential does before it runs (built-ins and MCP servers alike): the
 * person's header to send, or the result that ends the call without running it — a credential gate
 * (`credential_required`) when they have not connected the provider, an error when it is not configured.
 */
import type { CredentialService } from '../infra/credentials/service';
import type { ToolRunResult } from './types';

export type ToolAuthorization =
  { ok: true; header: string; value: string; apiHosts: string[] } | { ok: false; result: ToolRunResult };

/**
 * `toApiHostsOnly`: the tool sends the credential to URLs the model picks (http_request), so a provider
 * that declares no `apiHosts` is refused before anyone is asked to connect it.
 */
export async function authorizeTool(
  credentials: CredentialService,
  userId: string,
  providerName: string,
  options: { toApiHostsOnly?: boolean } = {},
): Promise<ToolAuthorization> {
  const provider = credentials.provider(providerName);
  if (options.toApiHostsOnly && provider && provider.apiHosts.length === 0)
    return {
      ok: false,
      result: {
        status: 'error',
        content:
          `the provider "${providerName}" declares no "apiHosts", so http_request never sends its credential: ` +
          `add "apiHosts": ["<its API host>"] to providers.${providerName} in the policy file.`,
      },
    };
  const checked = await credentials.authorization(userId, providerName);
  if (checked.ok)
    return { ok: true, header: checked.header, value: checked.value, apiHosts: provider?.apiHosts ?? [] };
  if (!provider) return { ok: false, result: { status: 'error', content: `${checked.message}.` } };
  return {
    ok: false,
    result: {
      status: 'credential_required',
      content:
        checked.reason === 'unreadable'
          ? `${checked.message}. Nothing ran: the user must connect ${provider.displayName} again.`
          : `${checked.message}: the user must connect ${provider.displayName} first.`,
      credential: {
        provider: providerName,
        providerName: provider.displayName,
        kind: provider.kind,
        ...(checked.reason === 'unreadable' ? { note: `${capitalised(checked.message)}.` } : {}),
      },
    },
  };
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

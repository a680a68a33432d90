/**
 * The session's view of its MCP tools: discovered once per run, again after a tool server is connected, and
 * again when the list is older than the configured `mcpRefreshAfter` (sooner while a server is down), so a
 * server that comes back or changes its tools is picked up. A server's outage is told once, and its return too.
 */
import * as wf from '@temporalio/workflow';
import {
  describeMcpDiscovery,
  MCP_REFRESH_TOOL,
  type McpDiscovery,
  type McpToolSpec,
} from '../../common/tools/mcp';
import { discoverMcpTools, failureMessage } from './session-activities';
import type { SessionSettings } from './settings';
import type { SessionState } from './state';

/** How long a session trusts its list of MCP tools; while a server is down, it looks again sooner. */
const MCP_DISCOVERY_TTL_MS = 15 * 60_000;
const MCP_DOWN_RETRY_MS = 2 * 60_000;

export class McpTools {
  /** The tools known now; undefined until discovered (and again after a server was connected). */
  tools: McpToolSpec[] | undefined;
  private discoveredAt = 0;
  private down = new Set<string>();

  constructor(private readonly state: SessionState) {}

  /** The tools beyond the built-ins that the model is offered. */
  extraTools(
    settings: SessionSettings,
  ): { name: string; description: string; parameters: Record<string, unknown> }[] {
    return [
      ...(this.tools ?? []).map(({ name, description, parameters }) => ({ name, description, parameters })),
      ...(settings.mcpServers?.length ? [MCP_REFRESH_TOOL] : []),
    ];
  }

  /** Connecting a tool server makes its real tools appear: discover again before the next model call. */
  forget(): void {
    this.tools = undefined;
  }

  describe(settings: SessionSettings, discovery: McpDiscovery): string {
    return describeMcpDiscovery(settings.mcpServers ?? [], discovery);
  }

  /** Whether a model call should look at the servers' tools first (none configured, or fresh: no). */
  needsRefresh(settings: SessionSettings): boolean {
    if (!settings.mcpServers?.length) return false;
    const age = Date.now() - this.discoveredAt;
    const ttl = settings.mcpRefreshAfterMs ?? MCP_DISCOVERY_TTL_MS;
    const stale = ttl !== 'never' && age > (this.down.size ? Math.min(ttl, MCP_DOWN_RETRY_MS) : ttl);
    return !this.tools || stale;
  }

  async refresh(settings: SessionSettings, userId: string, now = false): Promise<McpDiscovery | undefined> {
    if (!settings.mcpServers?.length) return undefined;
    if (!now && !this.needsRefresh(settings)) return undefined;
    const discovery = await discoverMcpTools({ userId }).catch((error: unknown) => {
      if (wf.isCancellation(error)) throw error;
      // Told like a server that is down (once, and again when it is back): the tools known so far stay.
      const message = `looking up its tools failed: ${failureMessage(error)}`;
      return {
        tools: this.tools ?? [],
        errors: (settings.mcpServers ?? []).map((server) => ({ server, message })),
      } satisfies McpDiscovery;
    });
    this.tools = discovery.tools;
    this.discoveredAt = Date.now();
    const down = new Set(discovery.errors.map((e) => e.server));
    for (const problem of discovery.errors)
      if (!this.down.has(problem.server))
        this.state.notify(
          `The "${problem.server}" tool server is unavailable (${problem.message}); its tools are left out, everything else works.`,
        );
    for (const server of this.down)
      if (!down.has(server))
        this.state.notify(`The "${server}" tool server is back; its tools are available again.`);
    this.down = down;
    return discovery;
  }
}

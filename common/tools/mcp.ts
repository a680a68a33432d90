/**
 * MCP tools as the session workflow sees them: `<server>__<tool>`, discovered per session by an activity.
 * Pure: the workflow builds a ToolDefinition from a discovered spec (arguments are checked by the server,
 * whose errors come back as tool results the model can act on).
 */
import { z } from 'zod';
import { sharedSchemas } from '../shared-schemas';
import type { Policy, ToolDefinition } from './definitions';

export interface McpToolSpec {
  /** `<server>__<tool>`, as the model calls it. */
  name: string;
  server: string;
  tool: string;
  description: string;
  parameters: Record<string, unknown>;
  readOnly: boolean;
  destructive: boolean;
}

export interface McpDiscovery {
  tools: McpToolSpec[];
  errors: { server: string; message: string }[];
}

export const MCP_SEPARATOR = '__';

export function splitMcpName(name: string): { server: string; tool: string } | undefined {
  const at = name.indexOf(MCP_SEPARATOR);
  if (at <= 0) return undefined;
  return { server: name.slice(0, at), tool: name.slice(at + MCP_SEPARATOR.length) };
}

/** The default policy from the tool's own annotations: read-only tools run, everything else asks. */
export function mcpDefaultPolicy(spec: Pick<McpToolSpec, 'readOnly' | 'destructive'>): Policy {
  return spec.readOnly && !spec.destructive ? 'auto' : 'ask';
}

/** An MCP tool's arguments: its server checks them against its own schema, so any object passes here. */
const mcpArgsSchema = sharedSchemas('mcp-tools', () => ({ args: z.record(z.string(), z.unknown()) })).args;

/** An MCP tool as the policy and the gates see it, with the policy that applies when configuration says nothing. */
export function mcpToolDefinition(
  spec: Pick<McpToolSpec, 'name' | 'description'>,
  policy: Policy,
): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    schema: mcpArgsSchema,
    defaultPolicy: () => policy,
    subject: (args) => JSON.stringify(args),
  };
}

/**
 * The model's way to look at the tool servers again now — a server that was fixed or came back, tools that
 * changed — instead of waiting for `mcpRefreshAfter`. Handled by the session workflow itself (no approval).
 */
export const MCP_REFRESH_TOOL = {
  name: 'mcp_refresh',
  description:
    'Look at the MCP tool servers again now and list what each offers. Use it when the user says a tool server ' +
    'was fixed, is back or has new tools, or when a tool you expect is missing.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
} as const;

/** What the refresh found, server by server, for the model (and the person reading the transcript). */
export function describeMcpDiscovery(servers: readonly string[], discovery: McpDiscovery): string {
  return servers
    .map((server) => {
      const problem = discovery.errors.find((e) => e.server === server);
      if (problem) return `${server}: unavailable (${problem.message})`;
      const tools = discovery.tools.filter((t) => t.server === server).map((t) => t.name);
      if (tools.length === 1 && tools[0] === `${server}${MCP_SEPARATOR}connect`)
        return `${server}: needs a sign-in first (call ${tools[0]})`;
      return `${server}: ${tools.length ? tools.join(', ') : 'no tools'}`;
    })
    .join('\n');
}

/**
 * MCP tools as the session workflow sees them: `<server>__<tool>`, discovered per session by an activity.
 * Pure: the workflow builds a ToolDefinition from a discovered spec (arguments are checked by the server,
 * whose errors come back as tool results the model can act on).
 */
import { z } from 'zod';
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

export function mcpToolDefinition(spec: McpToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    schema: z.record(z.string(), z.unknown()),
    defaultPolicy: () => mcpDefaultPolicy(spec),
    subject: (args) => JSON.stringify(args),
  };
}

/**
 * The built-in tools on the worker, one entry each: the definition (name, schema, subject, credential), what
 * the tool needs — the shell sandbox, its command parsed for the policy — and its executor. Which names are
 * built-ins is decided by common/tools/registry.ts; arguments arrive already validated by the workflow.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import {
  currentTimeTool,
  httpRequestTool,
  shellExecuteTool,
  type ArgsSchema,
  type ToolDefinition,
} from '../../common/tools/definitions';
import type { BuiltinName } from '../../common/tools/registry';
import type { ToolRunResult } from '../types';
import type { AddressPolicy } from './address-policy';
import { runHttpRequest, type HttpCredential } from './http';
import type { ParsedShellCommand } from '../../common/shell-command';
import { parseShellCommand } from './parse-shell';
import type { ShellSandbox } from './sandbox';
import { sessionWorkdir } from './shell';
import { runShellInLauncher } from './shell-launcher';
import { sandboxKillCounter } from '../metrics';
import { currentTime } from './time';

export interface ToolContext {
  dataDir: string;
  sessionId: string;
  /** The workflow id and the workflow's own id for this call: the same on every attempt of one call. */
  idempotencyKey?: string;
  signal: AbortSignal;
  /** The sandbox as the worker found it at start, and the network the policy gives the tool; sandboxed tools only. */
  shell?: ShellSandbox;
  /**
   * The person's credential for the tool's provider, as the header to send, and the hosts the provider
   * declares (`apiHosts`). Never returned in output.
   */
  authorization?: HttpCredential;
  /** The policy file's `allowHosts` / `denyHosts` for http_request; without it only public addresses. */
  addressPolicy?: AddressPolicy;
}

type Executor = (args: Record<string, unknown>, context: ToolContext) => Promise<ToolRunResult>;

export interface BuiltinTool {
  readonly definition: ToolDefinition;
  /** Runs in the shell sandbox, with the network the policy file gives this tool ("none" unless set). */
  readonly sandboxed: boolean;
  /** The command the policy matches per simple command, parsed here on the Node side (the policy stays pure). */
  parseCommand(args: Record<string, unknown>): ParsedShellCommand | undefined;
  readonly execute: Executor;
}

/** One entry, typed by its tool's schema: the executor reads parsed arguments, never a cast. */
function builtin<Schema extends ArgsSchema>(
  definition: ToolDefinition<Schema>,
  entry: {
    sandboxed?: boolean;
    parseCommand?: (args: z.output<Schema>) => ParsedShellCommand;
    execute: (args: z.output<Schema>, context: ToolContext) => Promise<ToolRunResult>;
  },
): BuiltinTool {
  return {
    definition,
    sandboxed: entry.sandboxed ?? false,
    parseCommand: (raw) => {
      if (!entry.parseCommand) return undefined;
      const parsed = definition.schema.safeParse(raw);
      return parsed.success ? entry.parseCommand(parsed.data) : undefined;
    },
    execute: async (raw, context) => await entry.execute(definition.schema.parse(raw), context),
  };
}

export const builtins: { readonly [Name in BuiltinName]: BuiltinTool } = {
  shell_execute: builtin(shellExecuteTool, {
    sandboxed: true,
    parseCommand: (args) => parseShellCommand(args.command),
    execute: async (args, context) => {
      // Never unsandboxed by omission: without the sandbox the worker probed, nothing runs.
      if (!context.shell)
        return { status: 'error', content: 'shell_execute was given no sandbox; nothing ran' };
      return await runShellInLauncher({
        command: args.command,
        timeoutSeconds: args.timeout_seconds ?? 60,
        cwd: sessionWorkdir(context.dataDir, context.sessionId),
        sandbox: context.shell,
        signal: context.signal,
        onKill: sandboxKillCounter(context.shell.status.kind),
      });
    },
  }),
  http_request: builtin(httpRequestTool, {
    // The credential is attached inside, per hop, only for the provider's apiHosts.
    execute: async (args, context) =>
      await runHttpRequest({
        ...args,
        headers: withIdempotencyKey(args, context.idempotencyKey),
        signal: context.signal,
        policy: context.addressPolicy,
        credential: context.authorization,
      }),
  }),
  current_time: builtin(currentTimeTool, {
    execute: async (args) => currentTime(args.timezone),
  }),
};

/**
 * A request that changes something carries an `Idempotency-Key` (unless the model set one), so a server that
 * honours it can recognise the same call. A hash: the session's id stays with us.
 */
function withIdempotencyKey(
  args: { method: string; headers?: Record<string, string> | undefined },
  key: string | undefined,
): Record<string, string> | undefined {
  if (!key || args.method === 'GET' || args.method === 'HEAD') return args.headers;
  if (Object.keys(args.headers ?? {}).some((name) => name.toLowerCase() === 'idempotency-key'))
    return args.headers;
  const hashed = createHash('sha256').update(key).digest('base64url').slice(0, 32);
  return { ...args.headers, 'Idempotency-Key': hashed };
}

/** The executors by tool name (the security suites run them directly, as the worker does). */
export const executors: Record<string, Executor> = Object.fromEntries(
  Object.values(builtins).map((tool) => [tool.definition.name, tool.execute]),
);

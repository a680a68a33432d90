/** Executors of the built-in tools, keyed by name. Arguments arrive already validated by the workflow. */
import { currentTimeTool, httpRequestTool, shellExecuteTool } from '../../common/tools/definitions';
import type { z } from 'zod';
import type { ToolRunResult } from '../types';
import type { AddressPolicy } from './address-policy';
import { runHttpRequest, type HttpCredential } from './http';
import type { ShellSandbox } from './sandbox';
import { runShell, sessionWorkdir } from './shell';
import { currentTime } from './time';

export interface ToolContext {
  dataDir: string;
  sessionId: string;
  signal: AbortSignal;
  /** shell_execute's sandbox as the worker found it at start, and the network the policy gives it. */
  shell: ShellSandbox;
  /**
   * The person's credential for the tool's provider, as the header to send, and the hosts the provider
   * declares (`apiHosts`). Never returned in output.
   */
  authorization?: HttpCredential;
  /** The policy file's `allowHosts` / `denyHosts` for http_request; without it only public addresses. */
  addressPolicy?: AddressPolicy;
}

type Executor = (args: Record<string, unknown>, context: ToolContext) => Promise<ToolRunResult>;

export const executors: Record<string, Executor> = {
  [shellExecuteTool.name]: async (raw, context) => {
    const args = shellExecuteTool.schema.parse(raw) as z.infer<typeof shellExecuteTool.schema>;
    return await runShell({
      command: args.command,
      timeoutSeconds: args.timeout_seconds ?? 60,
      cwd: sessionWorkdir(context.dataDir, context.sessionId),
      sandbox: context.shell,
      signal: context.signal,
    });
  },
  [httpRequestTool.name]: async (raw, context) => {
    const args = httpRequestTool.schema.parse(raw) as z.infer<typeof httpRequestTool.schema>;
    // The credential is attached inside, per hop, only for the provider's apiHosts.
    return await runHttpRequest({
      ...args,
      signal: context.signal,
      policy: context.addressPolicy,
      credential: context.authorization,
    });
  },
  [currentTimeTool.name]: async (raw) => {
    const args = currentTimeTool.schema.parse(raw) as z.infer<typeof currentTimeTool.schema>;
    return currentTime(args.timezone);
  },
};

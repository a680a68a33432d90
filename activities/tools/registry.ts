/** Executors of the built-in tools, keyed by name. Arguments arrive already validated by the workflow. */
import { currentTimeTool, httpRequestTool, shellExecuteTool } from '../../common/tools/definitions';
import type { z } from 'zod';
import type { ToolRunResult } from '../types';
import { runHttpRequest } from './http';
import { runShell, sessionWorkdir } from './shell';
import { currentTime } from './time';

export interface ToolContext {
  dataDir: string;
  sessionId: string;
  signal: AbortSignal;
}

type Executor = (args: Record<string, unknown>, context: ToolContext) => Promise<ToolRunResult>;

export const executors: Record<string, Executor> = {
  [shellExecuteTool.name]: async (raw, context) => {
    const args = shellExecuteTool.schema.parse(raw) as z.infer<typeof shellExecuteTool.schema>;
    return await runShell({
      command: args.command,
      timeoutSeconds: args.timeout_seconds ?? 60,
      cwd: sessionWorkdir(context.dataDir, context.sessionId),
      signal: context.signal,
    });
  },
  [httpRequestTool.name]: async (raw, context) => {
    const args = httpRequestTool.schema.parse(raw) as z.infer<typeof httpRequestTool.schema>;
    return await runHttpRequest({ ...args, signal: context.signal });
  },
  [currentTimeTool.name]: async (raw) => {
    const args = currentTimeTool.schema.parse(raw) as z.infer<typeof currentTimeTool.schema>;
    return currentTime(args.timezone);
  },
};

/**
 * The built-in tools as the model and the approval policy see them: name, description, argument schema,
 * default policy and the "subject" that allow patterns and grants match against. Pure (zod only), so the
 * session workflow validates arguments, including an approver's edits, with the very schema the executor
 * trusts. Executors live in activities/tools/.
 */
import { z } from 'zod';
import { sharedSchemas } from '../shared-schemas';
import { providerNameSchema } from '../ids';
import { askUserArgsSchema } from './ask-user';
import { missionTools } from './missions';
import type { ArgsSchema, ToolDefinition } from './tool-definition';

export type { ArgsSchema, Policy, ToolDefinition } from './tool-definition';

/** Keeps the literal name, so the worker's table of executors is checked against the built-ins' names. */
function defineTool<const Name extends string, Schema extends ArgsSchema>(
  definition: ToolDefinition<Schema> & { readonly name: Name },
): ToolDefinition<Schema> & { readonly name: Name } {
  return definition;
}

const schemas = sharedSchemas('builtin-tools', () => ({
  shellExecute: z.strictObject({
    command: z.string().min(1).max(4_000).describe('The command line to run'),
    timeout_seconds: z.number().int().min(1).max(600).optional().describe('Kill the command after this long'),
  }),
  httpRequest: z.strictObject({
    method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
    url: z.url({ protocol: /^https?$/ }).describe('An absolute http(s) URL'),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.string().max(100_000).optional(),
    auth: providerNameSchema
      .optional()
      .describe(
        'Name of a configured credential provider (e.g. "github"): the user\'s token is sent as the Authorization header. The user is asked to connect it if needed.',
      ),
  }),
  currentTime: z.strictObject({ timezone: z.string().max(64).optional() }),
}));

export const shellExecuteTool = defineTool({
  name: 'shell_execute',
  description:
    "Run a shell command (sh -c) in this conversation's own working directory. Returns exit code and output (truncated).",
  schema: schemas.shellExecute,
  defaultPolicy: () => 'ask',
  subject: (args) => args.command,
});

export const httpRequestTool = defineTool({
  name: 'http_request',
  description: 'Make an HTTP request and return status, headers and the (truncated) response body.',
  schema: schemas.httpRequest,
  // A read with the person's credential asks too: an injected instruction could read private data with it and
  // send it on in a second GET. The policy file relaxes it (`when` rules on `auth`).
  defaultPolicy: (args) => ((args.method === 'GET' || args.method === 'HEAD') && !args.auth ? 'auto' : 'ask'),
  subject: (args) => `${args.method} ${args.url}`,
  credential: (args) => args.auth,
});

export const currentTimeTool = defineTool({
  name: 'current_time',
  description: 'The current date and time, optionally in an IANA time zone such as "Europe/Paris".',
  schema: schemas.currentTime,
  defaultPolicy: () => 'auto',
  subject: (args) => args.timezone ?? 'UTC',
});

/** Intercepted by the session workflow as a question gate; it has no executor and no approval. */
export const askUserTool = defineTool({
  name: 'ask_user',
  description:
    'Ask the person you are working for one to five structured questions and wait for their answers. Use it when ' +
    'you need a decision or a missing detail; do not guess. Returns JSON with the selected options and free text.',
  schema: askUserArgsSchema,
  defaultPolicy: () => 'auto',
  subject: (args) => args.questions.map((q) => q.label).join(', '),
});

export const builtinTools: readonly ToolDefinition[] = [
  shellExecuteTool,
  httpRequestTool,
  currentTimeTool,
  askUserTool,
  ...missionTools,
];

export function findTool(name: string): ToolDefinition | undefined {
  return builtinTools.find((tool) => tool.name === name);
}

export type ArgsCheck<Args = Record<string, unknown>> =
  { ok: true; args: Args } | { ok: false; error: string };

/** Validates model- or approver-supplied arguments; the error text is written for the model to act on. */
export function checkToolArgs<Schema extends ArgsSchema>(
  tool: ToolDefinition<Schema>,
  args: unknown,
): ArgsCheck<z.output<Schema>> {
  const parsed = tool.schema.safeParse(args);
  if (parsed.success) return { ok: true, args: parsed.data };
  const problems = parsed.error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
  return { ok: false, error: `invalid arguments for ${tool.name}: ${problems}` };
}

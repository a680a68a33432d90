/** What a tool is to the model and the policy: the shape every built-in tool (definitions.ts, missions.ts) has. */
import type { z } from 'zod';

export type Policy = 'auto' | 'ask' | 'deny';

/** Every tool's arguments are an object: the schema's output is what the policy, gates and executors read. */
export type ArgsSchema = z.ZodType<Record<string, unknown>>;

export interface ToolDefinition<Schema extends ArgsSchema = ArgsSchema> {
  readonly name: string;
  readonly description: string;
  readonly schema: Schema;
  /** The policy when configuration says nothing about this tool. */
  defaultPolicy(args: z.infer<Schema>): Policy;
  /** The text allow patterns and grants are matched against, e.g. the shell command. */
  subject(args: z.infer<Schema>): string;
  /**
   * The credential provider this call needs, if any: the executor receives the person's token as a
   * header at run time (the model never sees it), and a missing one opens a credential gate.
   */
  credential?(args: z.infer<Schema>): string | undefined;
}

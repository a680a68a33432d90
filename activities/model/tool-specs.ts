/** The tools as the model sees them: JSON schemas generated from the zod schemas the workflow validates with. */
import { z } from 'zod';
import { builtinTools } from '../../common/tools/definitions';

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

let cached: ToolSpec[] | undefined;

export function toolSpecs(): ToolSpec[] {
  cached ??= builtinTools.map((tool) => {
    const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.schema, { io: 'input' }) as Record<
      string,
      unknown
    >;
    return { name: tool.name, description: tool.description, parameters };
  });
  return cached;
}

export const DEFAULT_SYSTEM_PROMPT =
  "You are a helpful agent in a team chat. Use tools when they help; some need a person's approval, and a denied, " +
  'expired or superseded call was not run: do not retry it unchanged. Answer concisely in Markdown.';

/** Model-supplied argument text becomes an object, or stays text so the workflow can report the problem. */
export function parseToolArguments(text: string | undefined): unknown {
  if (!text || text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

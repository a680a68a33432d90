/** The arguments of a call as an Edit & approve dialog shows them (Slack and Discord), within its limit. */

/** Pretty JSON, compact when that fits better, or undefined. */
export function editableArgs(args: Record<string, unknown> | undefined, limit: number): string | undefined {
  if (!args) return undefined;
  const pretty = JSON.stringify(args, null, 2);
  if (pretty.length <= limit) return pretty;
  const compact = JSON.stringify(args);
  return compact.length <= limit ? compact : undefined;
}

/** What the clicker is told when a call's arguments are too large for the dialog. */
export function argsTooLarge(toolName: string, chars: number, limit: number): string {
  return `The arguments of ${toolName} are ${chars.toLocaleString('en')} characters, more than this dialog holds (${limit.toLocaleString('en')}): Approve or Deny them as they are, or edit them in the web chat or with \`agentctl resolve\`.`;
}

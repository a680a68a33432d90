/**
 * A tool's output must never carry the credential it was given (a server may echo request headers back):
 * the header value and the bare token are replaced before the result reaches the workflow.
 */
import type { ToolRunResult } from '../types';

export function redact(result: ToolRunResult, secretHeaderValue: string | undefined): ToolRunResult {
  if (!secretHeaderValue) return result;
  const token = secretHeaderValue.replace(/^(Bearer|Basic|token)\s+/i, '');
  let content = result.content;
  for (const secret of [secretHeaderValue, token])
    if (secret.length >= 8) content = content.split(secret).join('[credential redacted]');
  return { ...result, content };
}

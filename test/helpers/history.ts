/** Workflow history as searchable text: every payload decoded, so a scan for a secret really sees the data. */
import type { temporal } from '@temporalio/proto';

export function historyText(history: temporal.api.history.v1.IHistory): string {
  const parts: string[] = [];
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) parts.push(Buffer.from(value).toString('utf8'));
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
    else if (typeof value === 'string') parts.push(value);
  };
  walk(history);
  return parts.join('\n');
}

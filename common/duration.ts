/** Durations in configuration: "90s", "15m", "24h", "7d", a number of milliseconds, or "never". */
import { z } from 'zod';
import { sharedSchemas } from './shared-schemas';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function parseDuration(text: string): number | 'never' {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === 'never') return 'never';
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(trimmed);
  if (!match)
    throw new Error(`"${text}" is not a duration: use forms like "90s", "15m", "24h", "7d" or "never"`);
  const unit = (match[2] ?? 'ms') as keyof typeof UNIT_MS;
  return Math.round(Number(match[1]) * UNIT_MS[unit]);
}

export const durationSchema = sharedSchemas('duration', () => ({
  duration: z.union([z.number().int().positive(), z.string()]).transform((value, ctx) => {
    if (typeof value === 'number') return value;
    try {
      return parseDuration(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  }),
})).duration;

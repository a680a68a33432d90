/** current_time: the time now, in UTC and optionally an IANA time zone. */
import type { ToolRunResult } from '../types';

export function currentTime(timezone: string | undefined, now = new Date()): ToolRunResult {
  if (!timezone) return { status: 'ok', content: now.toISOString() };
  try {
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      dateStyle: 'full',
      timeStyle: 'long',
    }).format(now);
    return { status: 'ok', content: `${local} (${now.toISOString()})` };
  } catch {
    return {
      status: 'error',
      content: `unknown time zone "${timezone}": use an IANA name such as "Europe/Paris"`,
    };
  }
}

/** Mission times as the person reads them (the model passes them on as written): a day, a UTC time, how far. */
import { describe, expect, it } from 'vitest';
import { readableTime } from '../../activities/missions';

const now = Date.UTC(2026, 10, 29, 15, 48);

describe('mission times', () => {
  it('says the day, the UTC time and how far from now, never a raw timestamp', () => {
    expect(readableTime(Date.UTC(2026, 10, 29, 16, 0), now)).toBe(
      'Sun 29 Nov 2026, 16:00 UTC (in 12 minutes)',
    );
    expect(readableTime(Date.UTC(2026, 10, 30, 9, 0), now)).toBe('Mon 30 Nov 2026, 09:00 UTC (in 17 hours)');
    expect(readableTime(Date.UTC(2026, 11, 6, 9, 0), now)).toBe('Sun 6 Dec 2026, 09:00 UTC (in 7 days)');
    expect(readableTime(Date.UTC(2026, 10, 29, 15, 47), now)).toBe(
      'Sun 29 Nov 2026, 15:47 UTC (1 minute ago)',
    );
    expect(readableTime(now, now)).toBe('Sun 29 Nov 2026, 15:48 UTC (now)');
    expect(readableTime(now, now)).not.toMatch(/T\d\d:\d\d:\d\d/);
  });
});

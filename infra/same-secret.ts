/** Compares a presented secret with the expected one in constant time (no early exit on the first difference). */
import { createHash, timingSafeEqual } from 'node:crypto';

export function sameSecret(presented: string, expected: string): boolean {
  // Hashing first makes both sides the same length, so not even the length leaks through timing.
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && presented.length === expected.length;
}

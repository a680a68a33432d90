/**
 * A mission's webhook secret: derived from the vault's signing key and the mission id, so nothing secret is
 * stored in the mission's workflow history, and the gateway can check it without asking any workflow.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function webhookSecret(signingKey: Buffer, missionId: string): string {
  return createHmac('sha256', signingKey).update(`mission-webhook.${missionId}`).digest('base64url');
}

export function webhookSecretMatches(signingKey: Buffer, missionId: string, given: string): boolean {
  const expected = Buffer.from(webhookSecret(signingKey, missionId));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

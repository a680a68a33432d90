/**
 * A memo from a raw visibility answer, decoded as the client decodes `describe()` and `list()` (through the payload
 * codec when `PAYLOAD_KEY` is set). Used where a caller needs the raw service for what the client's list hides: its
 * page token, so a person's list can be paged.
 */
import type { Client } from '@temporalio/client';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';

export async function decodeMemo(
  client: Client,
  fields: Record<string, temporal.api.common.v1.IPayload> | null | undefined,
): Promise<Record<string, unknown> | undefined> {
  return await decodeMapFromPayloads(client.options.loadedDataConverter, fields ?? undefined);
}

/**
 * Registers the custom search attributes the workflows upsert. Idempotent: only missing ones are added,
 * so it is safe on every start and against an existing cluster.
 */
import type { Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { customSearchAttributes } from '../../common/search-attributes';

const { IndexedValueType } = temporal.api.enums.v1;
/** The server's type for each SDK type the workflows use (a number in a Keyword attribute is refused). */
const INDEXED_TYPES: Record<
  (typeof customSearchAttributes)[number]['type'],
  temporal.api.enums.v1.IndexedValueType
> = {
  [SearchAttributeType.KEYWORD]: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.KEYWORD_LIST]: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  [SearchAttributeType.INT]: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  [SearchAttributeType.DOUBLE]: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
};

export async function registerSearchAttributes(
  connection: Connection,
  namespace: string,
  log: (message: string) => void,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = customSearchAttributes.filter((key) => !known.has(key.name));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_TYPES[key.type]])),
  });
  log(`registered search attributes: ${missing.map((key) => key.name).join(', ')}`);
}

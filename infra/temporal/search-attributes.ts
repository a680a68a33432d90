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
  const existing =
    (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
  const missing = customSearchAttributes.filter((key) => !Object.hasOwn(existing, key.name));
  if (missing.length) {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_TYPES[key.type]])),
    });
    log(`registered search attributes: ${missing.map((key) => key.name).join(', ')}`);
  }
  // One registered with another type (by hand, or by an older release) refuses the workflows' upserts.
  const wrong = customSearchAttributes.filter(
    (key) => Object.hasOwn(existing, key.name) && existing[key.name] !== INDEXED_TYPES[key.type],
  );
  if (wrong.length)
    throw new Error(
      wrong
        .map(
          (key) =>
            `search attribute ${key.name} is registered as ${IndexedValueType[existing[key.name]!]}, the workflows need ${IndexedValueType[INDEXED_TYPES[key.type]]}: remove it (temporal operator search-attribute remove --name ${key.name}) and start again`,
        )
        .join('; '),
    );
}

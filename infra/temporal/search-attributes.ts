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

/** gRPC codes a fresh server answers with for a while: the namespace not in its cache yet, or not serving yet. */
const NOT_YET = new Set([5 /* NOT_FOUND */, 14 /* UNAVAILABLE */]);

const grpcCode = (error: unknown): number | undefined => {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | undefined)?.code;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'number' ? code : typeof cause === 'number' ? cause : undefined;
};

/**
 * Registers the attributes and waits until the server lists them, retrying with backoff while a fresh server
 * does not know the namespace yet (its namespace cache refreshes every few seconds after the namespace is made)
 * or is not serving yet. Anything else (a permission refused, an attribute of the wrong type) fails at once.
 */
export async function registerSearchAttributesPatiently(
  connection: Connection,
  namespace: string,
  log: (message: string) => void,
  options: { totalMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<void> {
  const deadline = Date.now() + (options.totalMs ?? 60_000);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let wait = 250;
  for (let attempt = 1; ; attempt++) {
    try {
      await registerSearchAttributes(connection, namespace, log);
      const listed =
        (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
      if (customSearchAttributes.every((key) => Object.hasOwn(listed, key.name))) return;
      if (Date.now() + wait > deadline)
        throw new Error(`the server does not list the registered search attributes after ${attempt} tries`);
    } catch (error) {
      if (!NOT_YET.has(grpcCode(error) ?? -1) || Date.now() + wait > deadline) throw error;
      if (attempt === 1)
        log(`namespace ${namespace} is not ready yet (${(error as Error).message}); retrying`);
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 4_000);
  }
}

/** The server's INVALID_ARGUMENT for a search attribute the namespace does not know. */
export function isUnknownSearchAttribute(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  return cause?.code === 3 && /search attribute/i.test(String(cause.message));
}

/**
 * Schemas built once per worker and shared by every workflow it caches.
 *
 * The SDK gives each cached workflow its own instance of every module of the workflow code (its isolation
 * between workflows), so a module-level zod schema is built again for every cached workflow: about 2 KiB per
 * schema node, over 400 KiB per session for the contracts and tool definitions (docs/BENCHMARKS.md, memory).
 * The worker preloads this module once (workers/workflow-code.ts, the SDK's `preloadModules`), so zod itself
 * and the groups built through `sharedSchemas` exist once per worker instead.
 *
 * Why a group is safe to share: a schema is a pure description of valid data. What zod writes into it after it
 * is built (members and internals derived on first use) is a cache of that description, the same whichever
 * workflow computes it, so no workflow can see another's state through it. A group's build therefore uses
 * nothing but zod, constants and other shared schemas: never a workflow API, never per-workflow state.
 * (The SDK deep-freezes what a preloaded module exports, which zod's lazy derivation cannot live with; the
 * groups are kept here, not exported, for that reason.)
 */
import { z } from 'zod';

const groups = new Map<string, { build: string; schemas: unknown }>();

/**
 * The group of schemas called `name`, built by `build` the first time any workflow (or process) asks for it.
 * Names are unique: the same name with a different build is a programming error and throws at load.
 */
export function sharedSchemas<T extends object>(name: string, build: () => T): T {
  const source = build.toString();
  const known = groups.get(name);
  if (known) {
    if (known.build !== source) throw new Error(`two different schema groups are called "${name}"`);
    return known.schemas as T;
  }
  const schemas = build();
  groups.set(name, { build: source, schemas });
  return schemas;
}

// zod writes its defaults (English messages, the parse memoizer) into its config when it builds its first
// schema. Build one now, while this module loads and before the SDK freezes that config with it.
// eslint-disable-next-line no-restricted-syntax -- this one runs once per worker, in the preloaded module itself
z.object({ settled: z.string() }).safeParse({ settled: '' });

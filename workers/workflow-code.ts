/**
 * The workflow code every worker runs, in one place: the session and mission workflows, from a prebuilt
 * bundle (`npm run bundle`) or bundled at start. Every worker, test and replay uses exactly this.
 *
 * The SDK's OpenTelemetry workflow interceptors are not bundled, on purpose: they add awaits to signal handlers
 * and activity scheduling, which reorders the session's timer cancellations; the recorded-history replay test
 * showed every existing session history failing to replay with them. Tracing therefore covers clients and
 * activities (see infra/telemetry.ts); the one interceptor bundled (workflows/turn-trace.ts) only adds a turn's
 * trace context to its activities' headers, synchronously, so histories replay unchanged.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type BundleOptions,
  type WorkerOptions,
} from '@temporalio/worker';
import type { Tracing } from '../infra/telemetry';

// A directory: the bundler finds index.ts (source) or index.js (dist), also under test runners.
const workflowsPath = path.resolve(__dirname, '../workflows');

/**
 * Modules evaluated once per worker and shared by every workflow it caches, instead of once per workflow (the SDK
 * gives each cached workflow its own instance of every other module): zod and the shared schema groups (see
 * common/shared-schemas.ts for why that is safe), and pure helper modules with no state of their own. The SDK
 * deep-freezes what these export, and what they import; so none may export a schema or import a module that does
 * (test/common/shared-schemas.test.ts checks the first, every workflow test the second), and none may keep state.
 */
const SHARED_MODULES = [
  '../common/shared-schemas',
  '../common/errors',
  '../common/search-attributes',
  '../common/budgets',
  '../common/transcript-chunks',
  '../common/glob',
  '../common/missions/addressing',
  '../common/tools/elicitation',
  'session/call-ids',
  'session/context-window',
  'session/outbound',
  'session/repair',
  'session/transcript',
  'session/state',
  'session/settings',
];

/** The shared modules of the workflow code in `dir` (the sources, or the compiled code beside them). */
const sharedModulesIn = (dir: string) => SHARED_MODULES.map((module) => path.resolve(dir, module));

export const sharedWorkflowModules = sharedModulesIn(workflowsPath);

/**
 * How the workflow code is bundled, everywhere (workers, tests, replay, bench): the shared modules above, and
 * module concatenation (webpack's scope hoisting, off in the SDK's development build). The SDK gives each cached
 * workflow its own instance of every module it does not share, and each instance costs a record in the
 * workflow's module cache, an exports object with a getter per export and a closure per function. Concatenated,
 * the workflow code's ~60 modules become a handful, about 30 KiB less per cached session (docs/BENCHMARKS.md,
 * memory). Only the layout changes, not what runs: the recorded histories replay the same.
 */
export function workflowBundleOptions(
  from = workflowsPath,
): Pick<
  BundleOptions,
  'workflowsPath' | 'preloadModules' | 'webpackConfigHook' | 'workflowInterceptorModules'
> {
  return {
    workflowsPath: from,
    // Adds a turn's trace context to the headers of the activities it schedules, and nothing else (turn-trace.ts).
    workflowInterceptorModules: [path.resolve(from, 'turn-trace')],
    // The same modules of the code being bundled: shared copies of other files would be loaded beside them.
    preloadModules: sharedModulesIn(from),
    webpackConfigHook: (config) => ({
      ...config,
      optimization: { ...config.optimization, concatenateModules: true },
    }),
  };
}

/**
 * Changes whenever the bundle's layout does for the same sources (the options above), so a bundle kept by
 * cachedWorkflowBundle from before is not reused.
 */
const BUNDLE_LAYOUT = 'concatenated-modules';

/** Worker options for the workflow code: from a prebuilt bundle when given, else bundled at start. */
export function workflowCode(
  bundlePath?: string,
  tracing?: Pick<Tracing, 'activity' | 'client'>,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions' | 'interceptors'> {
  const { workflowsPath: from, workflowInterceptorModules, ...bundlerOptions } = workflowBundleOptions();
  return {
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: from, bundlerOptions }),
    interceptors: {
      // A prebuilt bundle has them inside; bundled at start, the worker takes them from here.
      ...(bundlePath ? {} : { workflowModules: workflowInterceptorModules }),
      ...(tracing ? { activity: tracing.activity, client: tracing.client } : {}),
    },
  };
}

/**
 * The workflow bundle of `from` (a directory with the workflows' index, TypeScript or compiled), starting with the
 * digest of what it is made of (`workflowCodeDigest`): its build id, the same for one commit wherever it is checked
 * out, although webpack's output names files by where they are (infra/temporal/deployment.ts).
 */
export async function bundleWorkflows(from = workflowsPath): Promise<string> {
  // Warnings and errors only: webpack's module statistics are noise before `npm start`'s link.
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(from),
    logger: new DefaultLogger('WARN'),
  });
  // On the first line, not a line of its own: the inline source map's lines stay where they are, and the worker
  // takes everything after the map's comment at the end as the map.
  return `${workflowCodeMarker(workflowCodeDigest(from))}${code}`;
}

/**
 * The workflow bundle for this version of the workflow code, built at most once: a worker that starts again
 * (after a crash, a deploy of other code, `npm start`) reuses it instead of spending seconds in webpack. The
 * version is a digest of everything the bundle is made of: the files of workflows/ and common/ (lint keeps
 * workflow code to those two folders), the modules it preloads and the versions of the three packages they may
 * import.
 */
export async function cachedWorkflowBundle(
  cacheDir: string,
  log: (message: string) => void,
): Promise<string> {
  const file = path.join(cacheDir, `workflows-${workflowCodeDigest()}.js`);
  if (existsSync(file)) return file;
  const started = Date.now();
  const code = await bundleWorkflows();
  mkdirSync(cacheDir, { recursive: true });
  // Written whole, then renamed: a worker starting at the same moment never reads half a bundle.
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, code);
  renameSync(partial, file);
  // Bundles of earlier versions stay: workflows pinned to them are drained by this process (workers/drain.ts), which
  // removes each once nothing runs on its version.
  log(`workflow bundle built in ${Date.now() - started} ms and kept for later starts: ${file}`);
  return file;
}

/**
 * What a bundle of `from` is made of, as a digest: the files of workflows/ and common/ by their paths inside the
 * checkout, the layout, the preloaded modules and the versions of the packages workflow code may import.
 */
export function workflowCodeDigest(from = workflowsPath): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|js|mjs|cjs|json)$/.test(name))
        hash.update(`${path.relative(from, full)}\0`).update(readFileSync(full));
    }
  };
  walk(from);
  walk(path.resolve(from, '../common'));
  hash.update(`layout:${BUNDLE_LAYOUT}\0`);
  for (const shared of sharedModulesIn(from)) hash.update(`preload:${path.relative(from, shared)}\0`);
  for (const pkg of ['@temporalio/workflow', '@temporalio/common', 'zod'])
    hash.update(
      `${pkg}@${(JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version}\0`,
    );
  return hash.digest('hex').slice(0, 16);
}

/** How a bundle starts, naming its digest (deployment.ts reads it back as the build id). */
export const workflowCodeMarker = (digest: string): string => `/* workflow-code ${digest} */`;

// One linter for the whole tree; workflows/ gets extra rules that keep it deterministic by construction.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

// Every cached workflow gets its own instance of workflow modules: a schema built at module level is built
// again per workflow (about 2 KiB a node). Build it once per worker in a sharedSchemas group instead.
const moduleLevelZod = {
  selector: "CallExpression[callee.object.name='z']:not(:function CallExpression)",
  message:
    'A module-level zod schema is built once per cached workflow: define it in a sharedSchemas(...) group (common/shared-schemas.ts).',
};
export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', 'test/artifacts/**', 'gateways/web/static/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The sandbox's egress bridge runs as plain CommonJS inside the sandbox, on the worker's own Node.
    files: ['activities/tools/egress-bridge.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The installed `agentctl` shim is plain CommonJS run by Node.
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Workflow code, and the pure modules it may import (common/), stay deterministic by construction: no
    // Node built-ins, no Temporal client or worker, no processes' code except as types.
    files: ['workflows/**/*.ts', 'common/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins
            .flatMap((name) => [name, `node:${name}`])
            .concat([
              '@temporalio/client',
              '@temporalio/worker',
              '@temporalio/activity',
              '@temporalio/testing',
              '@slack/bolt',
              'discord.js',
            ]),
          patterns: [
            {
              group: [
                '**/activities/**',
                '**/gateways/**',
                '**/workers/**',
                '**/infra/**',
                '**/platforms/**',
              ],
              allowTypeImports: true,
            },
            { group: ['node:*'] },
          ],
        },
      ],
      'no-restricted-syntax': ['error', moduleLevelZod],
    },
  },
  {
    // The one place that asks the SDK about a patch (the baseline, see the file).
    files: ['workflows/versions.ts'],
    rules: { 'no-restricted-syntax': ['error', moduleLevelZod] },
  },
  {
    // A platform's worker-role files (what activities/deliver.ts sends with) never reach into the gateway.
    files: [
      'platforms/*/outbound.ts',
      'platforms/*/render*.ts',
      'platforms/*/ids.ts',
      'platforms/*/rest.ts',
      'platforms/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/gateways/**'], message: 'worker-role platform code must not import the gateway' },
          ],
        },
      ],
    },
  },
);

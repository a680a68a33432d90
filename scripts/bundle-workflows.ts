/**
 * `npm run bundle -- <file> [workflows-dir]`: prebuilds the workflow bundle so production workers start without
 * webpack. `workflows-dir` is the workflow code to bundle, by default the one beside this script; the image passes
 * the TypeScript sources, whose ES modules webpack can concatenate (workers/workflow-code.ts).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflows } from '../workers/workflow-code';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  const code = await bundleWorkflows(process.argv[3] ? path.resolve(process.argv[3]) : undefined);
  writeFileSync(out, code);
  process.stdout.write(
    `workflow bundle written to ${out} (${(code.length / 1024).toFixed(0)} KiB); set WORKFLOW_BUNDLE_PATH to use it\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});

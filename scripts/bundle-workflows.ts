/** `npm run bundle -- <file>`: prebuilds the workflow bundle so production workers start without webpack. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflows } from '../workers/workflow-code';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  const code = await bundleWorkflows();
  writeFileSync(out, code);
  process.stdout.write(
    `workflow bundle written to ${out} (${(code.length / 1024).toFixed(0)} KiB); set WORKFLOW_BUNDLE_PATH to use it\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});

/**
 * `agentctl`: the operator's command line.
 *   agentctl export <session>                      the transcript as JSON Lines on stdout
 *   agentctl import <file> --session <id> [--owner <user>]   start a web session from a JSONL transcript
 * Connects with TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../common/config';
import { connectClient } from '../../common/temporal/connect';
import { exportTranscript, importTranscript } from './transcripts';

const USAGE = `usage:
  agentctl export <session>
  agentctl import <file> --session <id> [--owner <user>]`;

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      session: { type: 'string' },
      owner: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, target] = positionals;
  if (values.help || !command) return void process.stdout.write(`${USAGE}\n`);
  const config = loadConfig();
  const client = await connectClient(
    config.temporal.address ?? `localhost:${config.temporal.devServerPort}`,
    config.temporal.namespace,
  );
  try {
    if (command === 'export' && target) {
      process.stdout.write(await exportTranscript(client, target));
    } else if (command === 'import' && target && values.session) {
      const result = await importTranscript(client, {
        taskQueue: config.temporal.taskQueue,
        sessionId: values.session,
        text: readFileSync(target, 'utf8'),
        ...(values.owner ? { owner: values.owner } : {}),
      });
      process.stdout.write(`imported ${result.messages} messages into ${result.workflowId}\n`);
    } else {
      throw new Error(`unknown or incomplete command\n${USAGE}`);
    }
  } finally {
    await client.connection.close();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`agentctl: ${(error as Error).message}\n`);
  process.exit(1);
});

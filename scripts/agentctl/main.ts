/**
 * `agentctl`: the operator's command line.
 *   agentctl list [--status S] [--owner U] [--missions]   running sessions (or missions)
 *   agentctl show <session|workflow id|mission:id>   state, open gates, recent transcript
 *   agentctl stuck                                 every open gate, by the people it waits on
 *   agentctl resolve <workflow> <gate> approve|deny --as <operator> [--reason R]
 *   agentctl stop <workflow> --as <operator>        stop the turn running there
 *   agentctl export <session>                      the transcript as JSON Lines on stdout
 *   agentctl import <file> --session <id> [--owner <user>]   start a web session from a JSONL transcript
 *   agentctl fork <session|workflow id> --at <message id> --as <user> [--retry] [--model provider:model]
 *                                                  a new web conversation up to that message (README, "Fork and retry")
 *   agentctl forks <session|workflow id>           a conversation's forks
 *   agentctl deploy status | promote <build id> --as <operator> | drain   the Worker Deployment (docs/VERSIONING.md)
 *   agentctl audit export --since <date|7d> [--until <date>] [--person <name>] [--format jsonl|csv]
 *                                                  every settled gate of the window (docs/OPERATIONS.md "Audit")
 * Connects with TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE.
 */
import { readOperatorKey } from '../../infra/operator-claim';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, modelLabels } from '../../infra/config';
import { dataConverterFor } from '../../infra/temporal/codec';
import { connectClient } from '../../infra/temporal/connect';
import { listWorkflows, resolveGate, showWorkflow, stopTurn, stuck } from './operate';
import { exportTranscript, importTranscript, resolveSessionWorkflowId } from './transcripts';
import { checkForkModel, forksOf, startFork } from '../../gateways/forks';
import { aliasesOf } from '../../common/identities';
import { deployDrain, deployPromote, deployStatus } from './deploy';
import { auditCsv, auditJsonl, exportAudit, parseAuditTime, secretArgsOf } from '../../infra/audit/export';

const USAGE = `usage:
  agentctl list [--status waiting_approval] [--owner alice] [--missions]
  agentctl show <session | workflow id | mission:<id>>
  agentctl stuck
  agentctl resolve <workflow> <gate> approve|deny --as <operator> [--reason <text>]
  agentctl stop <workflow> --as <operator>
  agentctl export <session>
  agentctl import <file> --session <id> [--owner <user>]
  agentctl fork <session | workflow id> --at <message id> --as <user> [--retry] [--model <provider:model>]
  agentctl forks <session | workflow id>
  agentctl deploy status
  agentctl deploy promote <build id> --as <operator>
  agentctl deploy drain [--rate <per second>]
  agentctl audit export --since <2026-10-01 | 7d> [--until <date>] [--person <name>] [--format jsonl|csv]`;

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      rate: { type: 'string' },
      session: { type: 'string' },
      owner: { type: 'string' },
      status: { type: 'string' },
      missions: { type: 'boolean' },
      as: { type: 'string' },
      reason: { type: 'string' },
      at: { type: 'string' },
      retry: { type: 'boolean' },
      model: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      person: { type: 'string' },
      format: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, target, gateId, choice] = positionals;
  if (values.help || !command) return void process.stdout.write(`${USAGE}\n`);
  const config = loadConfig();
  const client = await connectClient(
    config.temporal.address ?? `localhost:${config.temporal.devServerPort}`,
    config.temporal.namespace,
    dataConverterFor(config.codec.payloadKey),
    config.temporal,
  );
  try {
    if (command === 'list') {
      process.stdout.write(
        await listWorkflows(client, {
          ...(values.status ? { status: values.status } : {}),
          ...(values.owner ? { owner: values.owner } : {}),
          ...(values.missions ? { missions: true } : {}),
        }),
      );
    } else if (command === 'show' && target) {
      process.stdout.write(await showWorkflow(client, target));
    } else if (command === 'stuck') {
      process.stdout.write(await stuck(client));
    } else if (command === 'resolve' && target && gateId && (choice === 'approve' || choice === 'deny')) {
      if (!values.as)
        throw new Error('resolve needs --as <your name>: the decision is recorded as operator:<name>');
      process.stdout.write(
        await resolveGate(client, {
          workflowId: target,
          gateId,
          choice,
          operator: values.as,
          operatorKey: readOperatorKey(config.dataDir, config.operatorKey),
          ...(values.reason ? { reason: values.reason } : {}),
        }),
      );
    } else if (command === 'stop' && target) {
      if (!values.as) throw new Error('stop needs --as <your name>: the stop is recorded as operator:<name>');
      process.stdout.write(
        await stopTurn(client, {
          workflowId: target,
          operator: values.as,
          operatorKey: readOperatorKey(config.dataDir, config.operatorKey),
        }),
      );
    } else if (command === 'export' && target) {
      process.stdout.write(await exportTranscript(client, target));
    } else if (command === 'import' && target && values.session) {
      const result = await importTranscript(client, {
        taskQueue: config.temporal.taskQueue,
        sessionId: values.session,
        text: readFileSync(target, 'utf8'),
        ...(values.owner ? { owner: values.owner } : {}),
      });
      process.stdout.write(`imported ${result.messages} messages into ${result.workflowId}\n`);
    } else if (command === 'fork' && target && values.at && values.as) {
      checkForkModel(values.model, modelLabels(config.model));
      const fork = await startFork(
        client,
        config.temporal.taskQueue,
        {
          from: resolveSessionWorkflowId(target),
          messageId: values.at,
          mode: values.retry ? 'retry' : 'through',
          by: values.as,
          byIds: aliasesOf(values.as, config.policy.users),
          ...(values.model ? { model: values.model } : {}),
        },
        10_000,
      );
      process.stdout.write(
        `forked ${fork.forkedFrom.workflowId} at ${values.at} into ${fork.workflowId} (owner @${values.as})\n`,
      );
    } else if (command === 'forks' && target) {
      const forks = await forksOf(client, resolveSessionWorkflowId(target), 10_000, { limit: 100 });
      process.stdout.write(
        forks.length
          ? forks
              .map(
                (f) =>
                  `${f.workflowId}  by @${f.by ?? '?'} at ${f.messageId ?? '?'}${f.mode === 'retry' ? ' (retry)' : ''}${f.model ? ` with ${f.model}` : ''}  ${f.startTime}\n`,
              )
              .join('')
          : 'no forks\n',
      );
    } else if (command === 'audit' && target === 'export') {
      if (!values.since) throw new Error('audit export needs --since <date | 7d>');
      const format = values.format ?? 'jsonl';
      if (format !== 'jsonl' && format !== 'csv')
        throw new Error(`--format is jsonl or csv, not "${format}"`);
      const records = await exportAudit(
        client,
        {
          since: parseAuditTime(values.since),
          until: values.until ? parseAuditTime(values.until) : new Date(),
          ...(values.person ? { person: values.person } : {}),
        },
        { users: config.policy.users, secretArgs: secretArgsOf(config) },
      );
      process.stdout.write(format === 'csv' ? auditCsv(records) : auditJsonl(records));
      process.stderr.write(`${records.length} record${records.length === 1 ? '' : 's'}\n`);
    } else if (command === 'deploy' && config.temporal.deployment) {
      const deployment = {
        client,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        deploymentName: config.temporal.deployment.name,
      };
      if (target === 'status') process.stdout.write(await deployStatus(deployment));
      else if (target === 'drain') {
        const rate = values.rate === undefined ? config.drainRatePerSecond : Number(values.rate);
        if (!(rate >= 0.1 && rate <= 10_000))
          throw new Error(
            `--rate takes workflows a second, 0.1 to 10000 (got "${values.rate}"), e.g. --rate 50`,
          );
        process.stdout.write(await deployDrain(deployment, rate, 'agentctl'));
      } else if (target === 'promote' && gateId) {
        if (!values.as)
          throw new Error("promote needs --as <your name>: it is recorded as the change's identity");
        process.stdout.write(await deployPromote(deployment, gateId, `operator:${values.as}`));
      } else throw new Error(`deploy needs status, promote <build id> --as <name>, or drain\n${USAGE}`);
    } else if (command === 'deploy') {
      throw new Error(
        'TEMPORAL_WORKER_VERSIONING=off: the workers are unversioned, there is no deployment to drive',
      );
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

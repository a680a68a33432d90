/**
 * A process of its own that asks for one person's credential on cue (a line on stdin) and prints the
 * outcome as a JSON line: two of these against one PostgreSQL vault are two workers on two hosts.
 * Env: DATABASE_URL, VAULT_KEY, PROVIDERS (the policy file's "providers" as JSON), USER_ID, PROVIDER.
 */
import { createInterface } from 'node:readline';
import { resolveProviders } from '../../infra/credentials/providers';
import { CredentialService } from '../../infra/credentials/service';

async function main(): Promise<void> {
  const env = process.env as Record<string, string>;
  const credentials = new CredentialService(resolveProviders(JSON.parse(env.PROVIDERS!), env), {
    vaultPath: '/nonexistent/vault.sqlite',
    vaultKey: env.VAULT_KEY,
    databaseUrl: env.DATABASE_URL,
  });
  await credentials.ready();
  console.log('ready');
  for await (const _line of createInterface({ input: process.stdin }))
    console.log(JSON.stringify(await credentials.authorization(env.USER_ID!, env.PROVIDER!)));
  await credentials.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

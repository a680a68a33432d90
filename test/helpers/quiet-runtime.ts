/** Keeps the SDK's worker lifecycle chatter out of test output; warnings and errors still show. */
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

// A developer's own `.env` in the checkout must not change what the processes a test starts are configured with.
process.env.AGENT_DOTENV = 'off';

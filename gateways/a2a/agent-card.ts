/**
 * The agent card (`/.well-known/agent-card.json`, public as A2A asks): where the JSON-RPC endpoint is, what it
 * speaks (A2A 1.0, and 0.3 for older clients), and how a caller signs in, which is the web chat's sign-in mode.
 */
import type { AgentCard, SecurityScheme } from '@a2a-js/sdk';
import type { AppConfig } from '../../infra/config';
import type { WebAuth } from '../web/auth/web-auth';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** This runtime's version, from its package.json (found upward from here: in the sources and in dist/ alike). */
function runtimeVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file))
      return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0';
  }
  return '0';
}
const VERSION = runtimeVersion();

/** The web chat's sign-in, as A2A security schemes: what a calling agent must send. */
function security(config: AppConfig, auth: WebAuth): Record<string, SecurityScheme> {
  if (auth.mode === 'local')
    return {
      accessToken: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'bearer',
            bearerFormat: '',
            description:
              "this install's access token (WEB_AUTH_TOKEN, or DATA_DIR/web-token), as Authorization: Bearer",
          },
        },
      },
    };
  if (auth.mode === 'proxy')
    return {
      proxy: {
        scheme: {
          $case: 'apiKeySecurityScheme',
          value: {
            location: 'header',
            // Which header is the proxy's business: a caller never sets it, so the card does not name it.
            name: 'identity',
            description:
              'the authenticating proxy in front of the gateway names the caller; sign in through it',
          },
        },
      },
    };
  return {
    session: {
      scheme: {
        $case: 'apiKeySecurityScheme',
        value: {
          location: 'cookie',
          name: auth.cookieName,
          description: "the web chat's sign-in session (sign in at /auth/login)",
        },
      },
    },
  };
}

export function agentCard(config: AppConfig, auth: WebAuth): AgentCard {
  const url = `${config.publicUrl.replace(/\/$/, '')}/api/a2a`;
  const schemes = security(config, auth);
  return {
    name: 'Durable agent',
    description:
      'An agent that works with tools on behalf of the person who asks, and waits for people (approvals, answers, sign-ins) as long as it takes: a task that needs one is input-required or auth-required until it is answered, across restarts and deploys.',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ],
    provider: undefined,
    version: VERSION,
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: schemes,
    securityRequirements: Object.keys(schemes).map((name) => ({ schemes: { [name]: { list: [] } } })),
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'conversation',
        name: 'Conversation',
        description:
          'Say what you need in words. A task is one turn of a conversation (its contextId); answer its interrupts with a data part {"resume": [{"interruptId", "status", "payload"}]}, shaped as each interrupt\'s responseSchema says.',
        tags: ['chat', 'tools', 'human-in-the-loop'],
        examples: ['What changed in the deploy log since yesterday?'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

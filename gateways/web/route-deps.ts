/** What the web API's routes are given by the gateway (gateways/serve.ts). */
import type { AgentCard } from '@a2a-js/sdk';
import type { A2aMissions } from '../a2a/mission-tasks';
import type { Logger } from '../../infra/log';
import type { CredentialTrail } from '../credential-trail';
import type { CredentialService } from '../../infra/credentials/service';
import type { StreamHub } from '../stream-hub';
import type { Sessions } from '../sessions';
import type { WebAuth } from './auth/web-auth';
import type { Inbox } from './inbox';
import type { LiveViews } from './live-views';
import type { SessionAccess } from './session-access';

export interface WebRouteDeps {
  sessions: Sessions;
  auth: WebAuth;
  access: SessionAccess;
  /** Every open decision a person may make, across channels ("Needs you"). */
  inbox: Inbox;
  /** The live views (one watch per session in this process, shared by its tabs). */
  live: LiveViews;
  /** Partial text of answers being written (streamed answers), pushed to the tabs too. */
  streams?: StreamHub;
  rate: { messagesPerMinute: number; sessionsPerMinute: number };
  /** Origins of AG-UI front ends served elsewhere (AGUI_ALLOWED_ORIGINS): CORS for POST /api/agui only. */
  aguiOrigins: readonly string[];
  /** The A2A agent card (gateways/a2a/agent-card.ts): what POST /api/a2a says it is. */
  a2aCard: AgentCard;
  /** Missions fired over A2A (gateways/a2a/mission-tasks.ts): fired as the caller, read from the mission. */
  missions: A2aMissions;
  /** Non-public hosts A2A push notifications may reach (A2A_PUSH_ALLOW_HOSTS), and the policy's denied hosts. */
  a2aPushHosts: { allowHosts: readonly string[]; denyHosts: readonly string[] };
  /** True once the gateway shuts down (its connections are about to be cut). */
  closing: () => boolean;
  temporalUiUrl: string | undefined;
  namespace: string;
  /** The scripted demo model answers (no MODEL_PROVIDER set): the first screen says so, and how to connect one. */
  demoModel: boolean;
  /** The deployment's models (`provider:model`, primary first): what a retry may ask for. */
  models: readonly string[];
  log: Logger;
  /** A personal "Connect <provider>" link for this user. */
  connectUrl: (userId: string, provider: string, expiresAt?: number) => string;
  credentials: () => CredentialService;
  /** Credentials disconnected go into the person's audit trail. */
  credentialTrail: CredentialTrail;
}

/**
 * `/readyz`: ready means a person's first message would be taken now. Three checks, each bounded (2 s):
 * - the frontend answers (GetSystemInfo);
 * - the history service answers: `describe()` of a workflow id that never exists goes through the frontend to
 *   the history shard that would own it, so a "not found" is a history answer, and a history outage shows here
 *   even though the frontend still answers;
 * - the frontend maps the search attributes a start sets: a real server's namespace cache learns newly registered
 *   attributes only after it refreshes (~2 s after the first start of a fresh server), and until then a start
 *   naming them is refused. A count query naming them is validated by the same mapping and writes nothing; once
 *   it passes, it is not asked again (attributes are never unmapped by us).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { AgentChannel, AgentOwner, AgentStatus } from '../common/search-attributes';
import { withinDeadline } from '../infra/temporal/deadline';

const CHECK_DEADLINE_MS = 2_000;
/** Never started by anything: a probe id the history service answers "not found" for. */
export const READINESS_PROBE_ID = 'agent-readiness-probe:never-started';

export type Readiness = { ok: true } | { ok: false; temporal: string };

export class ReadinessProbe {
  private attributesMapped = false;

  constructor(private readonly client: Client) {}

  async check(): Promise<Readiness> {
    const bounded = <T>(fn: () => Promise<T>) => withinDeadline(this.client, CHECK_DEADLINE_MS, fn);
    try {
      await bounded(() => this.client.workflowService.getSystemInfo({}));
    } catch (error) {
      return { ok: false, temporal: `unreachable: ${(error as Error).message}` };
    }
    try {
      await bounded(() => this.client.workflow.getHandle(READINESS_PROBE_ID).describe());
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError))
        return { ok: false, temporal: `history service not answering: ${(error as Error).message}` };
    }
    if (!this.attributesMapped) {
      const query = [AgentStatus, AgentChannel, AgentOwner]
        .map((key) => `${key.name} = 'readyz'`)
        .join(' AND ');
      try {
        await bounded(() => this.client.workflow.count(query));
        this.attributesMapped = true;
      } catch (error) {
        return { ok: false, temporal: `search attributes not mapped yet: ${(error as Error).message}` };
      }
    }
    return { ok: true };
  }
}

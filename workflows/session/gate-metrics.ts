/**
 * What an operator counts of gates (docs/OPERATIONS.md "Metrics"), through the SDK's workflow meter: the worker's
 * Prometheus endpoint exports them with the SDK's own (WORKER_METRICS_ADDRESS). Emitted as the workflow acts, never
 * again while it replays; no command, so histories are unchanged. Labels are low-cardinality: the gate's kind, the
 * conversation's channel, the outcome; never a person, a conversation or a tool's arguments.
 */
import * as wf from '@temporalio/workflow';
import { isBudgetGate } from '../../common/gates/words';
import type { Gate } from './contract';

let meters:
  | {
      opened: ReturnType<typeof wf.metricMeter.createCounter>;
      decided: ReturnType<typeof wf.metricMeter.createCounter>;
      wait: ReturnType<typeof wf.metricMeter.createHistogram>;
      refused: ReturnType<typeof wf.metricMeter.createCounter>;
    }
  | undefined;

function metrics() {
  meters ??= {
    opened: wf.metricMeter.createCounter('agent_gates_opened', 'gates', 'Gates opened, by kind and channel'),
    decided: wf.metricMeter.createCounter(
      'agent_gate_outcomes',
      'gates',
      'Gates settled, by kind, channel and outcome (approved, denied, answered, connected, expired, stopped, …)',
    ),
    wait: wf.metricMeter.createHistogram(
      'agent_gate_wait',
      'float',
      'seconds',
      'How long a gate waited for its decision, by kind and outcome',
    ),
    refused: wf.metricMeter.createCounter(
      'agent_decisions_refused',
      'signals',
      'Decisions and answers the workflow refused, by cause (rule: not theirs, already decided, …; seal: no gateway signed it) and signal',
    ),
  };
  return meters;
}

const kindOf = (gate: Gate) => (gate.kind === 'approval' && isBudgetGate(gate) ? 'budget' : gate.kind);

export function gateOpened(gate: Gate, channel: string): void {
  if (!wf.inWorkflowContext()) return; // the gate rules' unit tests run them outside a workflow
  metrics().opened.add(1, { kind: kindOf(gate), channel });
}

export function gateSettled(gate: Gate, channel: string): void {
  if (!wf.inWorkflowContext()) return;
  const outcome = gate.resolution?.outcome ?? gate.status;
  const tags = { kind: kindOf(gate), channel, outcome };
  metrics().decided.add(1, tags);
  const at = gate.resolution?.at ?? Date.now();
  metrics().wait.record(Math.max(0, (at - gate.createdAt) / 1000), { kind: tags.kind, outcome });
}

/**
 * A decision or an answer refused: `rule` (not theirs to decide, already decided, not a choice this gate takes), or
 * `seal` (no gateway signed it, or its signature was moved, altered, expired or used: someone reached Temporal
 * without a gateway, or the gateway and worker keys differ).
 */
export function decisionRefused(cause: 'rule' | 'seal', signal: string): void {
  if (!wf.inWorkflowContext()) return;
  metrics().refused.add(1, { cause, signal });
}

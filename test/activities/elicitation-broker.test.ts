/**
 * The worker's side of a tool server's questions (activities/mcp/elicitation.ts): a question is tied to a call only
 * when exactly one call is in flight on the connection and it was not cut short before; the reply the person gave
 * goes back only to the same request (by digest, in order); everything else is answered "cancel".
 */
import { describe, expect, it } from 'vitest';
import { CallInputs, ElicitationBroker, toAsk } from '../../activities/mcp/elicitation';

const form = (message: string) => ({
  message,
  requestedSchema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
});
const digestOf = (message: string) => {
  const ask = toAsk('s', form(message));
  if ('refused' in ask) throw new Error(ask.refused);
  return ask.digest;
};

describe('the worker matching a server’s questions to calls', () => {
  it('brings a new question back (cut short), and gives the answer only to the same request in the next round', async () => {
    const broker = new ElicitationBroker('s');
    const first = new CallInputs([]);
    await broker.during(first, async () => {
      expect(broker.answer(form('Code?'))).toEqual({ action: 'cancel' });
    });
    expect(first.asked).toMatchObject({ mode: 'form', message: 'Code?' });
    expect(first.cut.signal.aborted).toBe(true);

    const again = new ElicitationBroker('s');
    const second = new CallInputs([{ digest: digestOf('Code?'), action: 'accept', content: { code: '42' } }]);
    await again.during(second, async () => {
      // A different question first: not given the answer meant for "Code?".
      expect(again.answer(form('Transfer all funds?'))).toEqual({ action: 'cancel' });
    });
    expect(second.asked).toMatchObject({ message: 'Transfer all funds?' });
    const third = new CallInputs([{ digest: digestOf('Code?'), action: 'accept', content: { code: '42' } }]);
    await new ElicitationBroker('s').during(third, async () => undefined);
    const fourth = new ElicitationBroker('s');
    await fourth.during(third, async () => {
      expect(fourth.answer(form('Code?'))).toEqual({ action: 'accept', content: { code: '42' } });
      // The same request again in the same round: the reply was used once.
      expect(fourth.answer(form('Code?'))).toEqual({ action: 'cancel' });
    });
  });

  it('answers "cancel" when the question cannot be tied to one call: two in flight, or a connection retired after a cut', async () => {
    const logged: string[] = [];
    const broker = new ElicitationBroker('s', (message) => logged.push(message));
    const a = new CallInputs([{ digest: digestOf('Code?'), action: 'accept', content: { code: 'A' } }]);
    const b = new CallInputs([]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = broker.during(a, () => held);
    await broker.during(b, async () => {
      expect(broker.answer(form('Code?'))).toEqual({ action: 'cancel' });
    });
    release();
    await first;
    expect(a.asked).toBeUndefined();
    expect(b.asked).toBeUndefined();

    // A call was cut short: its server's handler may still ask; nothing asked on that connection is tied to a call.
    let closed = false;
    const c = new CallInputs([{ digest: digestOf('Code?'), action: 'accept', content: { code: 'C' } }]);
    broker.retire(() => (closed = true));
    expect(closed).toBe(true);
    await broker.during(c, async () => {
      expect(broker.answer(form('Code?'))).toEqual({ action: 'cancel' });
    });
    expect(logged.filter((m) => m === 'MCP question not matched to one call')).toHaveLength(2);
  });

  it('closes a retired connection only once its calls in flight are done', async () => {
    const broker = new ElicitationBroker('s');
    let closed = false;
    let release!: () => void;
    const running = broker.during(
      new CallInputs([]),
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    broker.retire(() => (closed = true));
    expect(closed).toBe(false);
    release();
    await running;
    expect(closed).toBe(true);
  });
});

/**
 * Slack's streaming messages, one call at a time against the Slack fake (which refuses what Slack refuses):
 * only the attempt that started a stream writes to it, a word half written waits, and an attempt whose stream
 * another one took over leaves the message alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeStreams, streamTs } from '../../platforms/slack/native-stream';
import { FakeSlack } from '../helpers/fake-slack';

let slack: FakeSlack;
let streams: NativeStreams;
const warnings: string[] = [];
const thread = { team: 'T1', channel: 'C1', threadTs: '1700000000.000001' };

beforeAll(async () => {
  slack = await new FakeSlack().start();
  streams = new NativeStreams({ botToken: 'xoxb-test-token', apiUrl: `${slack.url}/api/` }, (message) =>
    warnings.push(message),
  );
});

afterAll(async () => {
  await slack?.stop();
});

describe("Slack's streaming messages", () => {
  it('shows a word only once it is written, and appends only what is new', async () => {
    const ref = (await streams.start(thread, 'Hel', { requester: 'U1', steps: [] }, 'attempt-1'))!;
    expect(ref).toMatch(/^stream:/);
    const stream = slack.streams.get(streamTs(ref)!)!;
    expect(stream.text).toBe('Hel');
    // No space yet: nothing settled beyond what is shown, so nothing is sent.
    expect(await streams.append(ref, 'Hello', 'attempt-1')).toBe(true);
    expect(slack.of('chat.appendStream')).toHaveLength(0);
    expect(await streams.append(ref, 'Hello there @U2 and', 'attempt-1')).toBe(true);
    expect(stream.text).toBe('Hello there <@U2> ');
    expect(await streams.append(ref, 'Hello there @U2 and more.', 'attempt-1', 'stop')).toBe(true);
    expect(stream).toMatchObject({ text: 'Hello there <@U2> and more.', streaming: false });
  });

  it('never lets another attempt append, and an attempt whose stream was taken over leaves it alone', async () => {
    const ref = (await streams.start(thread, 'First attempt ', { requester: 'U1', steps: [] }, 'attempt-1'))!;
    expect(await streams.append(ref, 'First attempt writes', 'attempt-2')).toBe(false);
    // A newer attempt (on another worker) stops the stream to edit it: the older one's next append is refused,
    // and from then on it leaves the message to the newer one.
    const newer = new NativeStreams({ botToken: 'x', apiUrl: `${slack.url}/api/` }, () => {});
    await newer.close('C1', ref);
    expect(slack.streams.get(streamTs(ref)!)!.streaming).toBe(false);
    expect(streams.lostBy(ref, 'attempt-1')).toBe(false);
    await expect(streams.append(ref, 'First attempt writes more', 'attempt-1')).rejects.toThrow(
      /message_not_in_streaming_state/,
    );
    expect(streams.lostBy(ref, 'attempt-1')).toBe(true);
    expect(streams.lostBy(ref, 'attempt-2')).toBe(false);
  });

  it('takes the whole answer, and is refused by name for a channel stream nobody is addressed to', async () => {
    expect(await streams.start(thread, 'Hi there', { steps: [] }, 'attempt-1')).toBeUndefined();
    expect(await streams.start(thread, 'Hi there', { requester: 'runtime', steps: [] }, 'a')).toBeUndefined();
    expect(slack.of('chat.startStream').filter((c) => c.markdown_text === 'Hi there')).toEqual([]);
    const ref = (await streams.start(thread, 'Hi ', { requester: 'U1', steps: [] }, 'attempt-1'))!;
    expect(await streams.append(ref, 'Hi there, all of it', 'attempt-1', 'whole')).toBe(true);
    expect(slack.streams.get(streamTs(ref)!)).toMatchObject({ text: 'Hi there, all of it', streaming: true });
    expect(await streams.finish('C1', streamTs(ref)!, undefined)).toBe(true);
    // Delivered again (a retried delivery): already closed, still delivered, nothing posted.
    expect(await streams.finish('C1', streamTs(ref)!, undefined)).toBe(true);
    expect(await streams.finish('C1', '1800000000.999999', undefined)).toBe(false);
  });
});

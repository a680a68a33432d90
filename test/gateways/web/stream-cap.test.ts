import { describe, expect, it } from 'vitest';
import { MAX_STREAMS_PER_PERSON, StreamCap, TOO_MANY_STREAMS } from '../../../gateways/web/stream-cap';

describe('open live views per person', () => {
  it('refuses one more than the cap, per person, and counts a closed tab once', () => {
    const cap = new StreamCap();
    const alice = Array.from({ length: MAX_STREAMS_PER_PERSON }, () => cap.take('alice'));
    expect(alice.every((release) => typeof release === 'function')).toBe(true);
    expect(cap.take('alice')).toBeUndefined();
    // Another person's tabs are counted apart.
    expect(cap.take('bob')).toBeTypeOf('function');
    // A tab closed (twice, as an abort and the stream's end both may) frees exactly one place.
    alice[0]!();
    alice[0]!();
    expect(cap.take('alice')).toBeTypeOf('function');
    expect(cap.take('alice')).toBeUndefined();
    expect(TOO_MANY_STREAMS).toContain(`(${MAX_STREAMS_PER_PERSON})`);
  });
});

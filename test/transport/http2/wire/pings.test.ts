/**
 * The pings this server sent and waits on: a bounded number outstanding, each acked by its own
 * payload, an unknown ack refused, and every waiter failed when the connection closes.
 */
import { describe, expect, it } from 'vitest';
import { OutstandingPings } from '../../../../src/transport/http2/wire/pings.js';

describe('OutstandingPings', () => {
  it('gives each ping an 8-byte payload of its own and calls back the one acked', () => {
    const pings = new OutstandingPings();
    const seen: string[] = [];
    const first = pings.start((err) => seen.push(`first ${err}`)) as Buffer;
    const second = pings.start((err) => seen.push(`second ${err}`)) as Buffer;
    expect(first).toHaveLength(8);
    expect(first.equals(second)).toBe(false);
    expect(pings.acked(Buffer.from(second))).toBe(true);
    expect(seen).toEqual(['second null']);
    // Acked once: the same payload again is not outstanding.
    expect(pings.acked(second)).toBe(false);
  });

  it('says false for an ack of a payload it never sent', () => {
    const pings = new OutstandingPings();
    pings.start(() => {});
    expect(pings.acked(Buffer.alloc(8, 0xab))).toBe(false);
  });

  it('refuses an 11th outstanding ping, and starts one again once one is acked', () => {
    const pings = new OutstandingPings();
    const payloads = Array.from({ length: 10 }, () => pings.start(() => {}));
    expect(payloads.every((p) => p !== undefined)).toBe(true);
    expect(pings.start(() => {})).toBeUndefined();
    pings.acked(payloads[0] as Buffer);
    expect(pings.start(() => {})).toBeInstanceOf(Buffer);
  });

  it('fails every waiter when the connection closes, and none twice', () => {
    const pings = new OutstandingPings();
    const errors: (Error | null)[] = [];
    const payload = pings.start((err) => errors.push(err)) as Buffer;
    pings.start((err) => errors.push(err));
    pings.failAll();
    expect(errors.map((e) => e?.message)).toEqual(['the connection closed', 'the connection closed']);
    pings.failAll();
    expect(pings.acked(payload)).toBe(false);
    expect(errors).toHaveLength(2);
  });
});

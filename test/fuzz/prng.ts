/** A seeded PRNG (mulberry32): every run of the fuzzer is replayed from its seed alone. */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uint32. */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : this.next() % n;
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() / 0x1_0000_0000 < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }

  /** A value near the edges a parser gets wrong: 0, 1, powers of two and their neighbours, the maxima. */
  edge(maxBits: number): number {
    const bits = this.int(maxBits + 1);
    const base = bits === 0 ? 0 : 2 ** bits;
    const value = base + this.pick([-1, 0, 1]);
    return Math.max(0, Math.min(value, 2 ** maxBits - 1));
  }
}

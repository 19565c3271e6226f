/** Growable Uint16Array, for packed tables whose size is only known while compiling them. */
export class U16Builder {
  data: Uint16Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Uint16Array(capacity);
  }
  reserve(n: number): void {
    if (this.length + n <= this.data.length) return;
    const next = new Uint16Array(Math.max(this.data.length * 2, this.length + n));
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }
  /** Exact-size copy of the content. */
  finish(): Uint16Array {
    return this.data.slice(0, this.length);
  }
}

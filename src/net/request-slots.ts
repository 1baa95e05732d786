/**
 * How many requests to other servers may be open at once, in all and per host: one slow or
 * hostile host fills its own slots and waits behind them, never the server's. A request
 * holds its slot from before it connects until its body has been read, cancelled or cut off
 * at its deadline. Waiters are served first come, first served, skipping those whose host is
 * still full.
 */
export class RequestSlots {
  private readonly open = new Map<string, number>();
  private total = 0;
  private readonly waiting: { host: string; grant: () => void }[] = [];

  constructor(
    private readonly maxPerHost: number,
    private readonly maxTotal: number,
  ) {}

  /** Resolves with the slot's release once one is free; rejects if the signal aborts first. */
  acquire(host: string, signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.hasRoom(host)) return Promise.resolve(this.take(host));
    return new Promise((resolve, reject) => {
      const waiter = {
        host,
        grant: () => {
          signal.removeEventListener("abort", abandon);
          resolve(this.take(host));
        },
      };
      const abandon = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", abandon, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Open requests now (to one host, or in all). */
  inUse(host?: string): number {
    return host === undefined ? this.total : (this.open.get(host) ?? 0);
  }

  private hasRoom(host: string): boolean {
    return this.total < this.maxTotal && (this.open.get(host) ?? 0) < this.maxPerHost;
  }

  private take(host: string): () => void {
    this.total++;
    this.open.set(host, (this.open.get(host) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.open.get(host) ?? 1) - 1;
      if (left === 0) this.open.delete(host);
      else this.open.set(host, left);
      this.next();
    };
  }

  private next() {
    for (let i = 0; i < this.waiting.length && this.total < this.maxTotal; ) {
      const waiter = this.waiting[i]!;
      if (this.hasRoom(waiter.host)) {
        this.waiting.splice(i, 1);
        waiter.grant();
      } else i++;
    }
  }
}

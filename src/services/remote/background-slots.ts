/**
 * A bound on background work of one kind (thread fills, profile fills): so many run at once,
 * so many wait their turn, and past that none is taken (the caller drops it: it is tried again
 * at the next request, not piled up). Closed, nothing waiting starts.
 */
export class BackgroundSlots {
  private active = 0;
  private waiting: (() => void)[] = [];
  closed = false;

  constructor(
    private maxRunning: number,
    private maxWaiting: number,
  ) {}

  /** No room: as many run and wait as the bounds allow. */
  full(): boolean {
    return this.closed || (this.active >= this.maxRunning && this.waiting.length >= this.maxWaiting);
  }

  /** Runs `work` once a slot is free (the caller checked `full()` first); null when closed meanwhile. */
  async run<T>(work: () => Promise<T>): Promise<T | null> {
    // A slot that frees up is handed to the first waiting, which finds it counted already.
    if (this.active >= this.maxRunning) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return this.closed ? null : await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Nothing more starts; those waiting are let go (each with a slot of its own, and does nothing). */
  close(): void {
    this.closed = true;
    for (const release of this.waiting.splice(0)) {
      this.active++;
      release();
    }
  }
}

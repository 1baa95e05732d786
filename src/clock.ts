/**
 * The one source of "now" for the server. Everything time-dependent (token and code expiry,
 * rate windows, idempotency, scheduled statuses, polls) reads it, so tests can move time.
 */
export interface Clock {
  now(): number;
  /** Called back when the clock is moved by hand; the system clock never calls. */
  onJump(listener: () => void): () => void;
}

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
  onJump(): () => void {
    return () => {};
  }
}

/**
 * A clock the tests drive. By default it runs with real time plus whatever the test has
 * added with advance(); given a start time it stands still until moved.
 */
export class ManualClock implements Clock {
  private offset = 0;
  private frozenAt: number | null;
  private listeners = new Set<() => void>();

  constructor(start?: number) {
    this.frozenAt = start ?? null;
  }
  now(): number {
    return this.frozenAt ?? Date.now() + this.offset;
  }
  set(ms: number) {
    if (this.frozenAt !== null) this.frozenAt = ms;
    else this.offset = ms - Date.now();
    for (const l of this.listeners) l();
  }
  advance(ms: number) {
    this.set(this.now() + ms);
  }
  onJump(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

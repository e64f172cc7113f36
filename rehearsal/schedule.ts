/**
 * When buyers arrive and drills strike. Without drills every buyer presses the button at once,
 * or they arrive evenly over `arrivalMs` when it is set (one phase of that length).
 * With n drills the crowd is cut into n + 1 phases of equal size, each arriving evenly over
 * `phaseMs`; drill k strikes halfway through phase k, and phase k + 1 opens once phase k's time is
 * up and drill k's part is back. A slow restart (a JVM on a busy machine) therefore never leaves
 * the later drills to strike after the crowd has gone home, and the last phase shows the pipeline
 * recovering under load.
 */
export class CrowdSchedule {
  readonly buyers: number;
  readonly phases: number;
  readonly phaseMs: number;
  readonly #opened: Promise<number>[] = [];
  readonly #open: ((at: number) => void)[] = [];

  constructor(buyers: number, drills: number, phaseMs: number, began: number, arrivalMs = 0) {
    this.buyers = buyers;
    this.phases = drills + 1;
    this.phaseMs = drills === 0 ? arrivalMs : phaseMs;
    for (let k = 0; k < this.phases; k += 1) {
      this.#opened.push(new Promise<number>((resolve) => this.#open.push(resolve)));
    }
    this.#open[0]?.(began);
  }

  /** The phase buyer `index` belongs to. */
  phaseOf(index: number): number {
    return Math.min(this.phases - 1, Math.floor((index * this.phases) / this.buyers));
  }

  /** When buyer `index` arrives (resolves once its phase has opened). */
  async arrival(index: number): Promise<number> {
    const phase = this.phaseOf(index);
    const opened = await this.phaseOpened(phase);
    const first = Math.ceil((phase * this.buyers) / this.phases);
    const size = Math.ceil(((phase + 1) * this.buyers) / this.phases) - first;
    return opened + ((index - first) / Math.max(1, size)) * this.phaseMs;
  }

  /** When phase k opened (waits for it). */
  phaseOpened(k: number): Promise<number> {
    const opened = this.#opened[k];
    if (opened === undefined) throw new Error(`the crowd has no phase ${k} (it has ${this.phases})`);
    return opened;
  }

  /** Drill k strikes halfway through phase k. */
  async strikeAt(k: number): Promise<number> {
    return (await this.phaseOpened(k)) + this.phaseMs / 2;
  }

  /** Drill k is over (its part back, or given up on): phase k + 1 opens when phase k's time is up, or now if later. */
  drillDone(k: number, now = Date.now()): void {
    void this.phaseOpened(k).then((opened) => this.#open[k + 1]?.(Math.max(opened + this.phaseMs, now)));
  }
}

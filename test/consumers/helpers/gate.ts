/**
 * A gate the `counted` handler waits at (records with behaviour `gated`) until the test opens it:
 * the test holds a member inside a batch, uncommitted, for as long as it needs, without timing.
 */
export interface Gate {
  /** How many records have reached the gate (those waiting and those let through). */
  readonly reached: number;
  readonly isOpen: boolean;
  /** Resolves once the gate is open (at once if it is). */
  pass(): Promise<void>;
  open(): void;
}

export function closedGate(): Gate {
  let reached = 0;
  let isOpen = false;
  let release: () => void = () => {};
  const opened = new Promise<void>((resolve) => (release = resolve));
  return {
    get reached() {
      return reached;
    },
    get isOpen() {
      return isOpen;
    },
    pass: () => {
      reached += 1;
      return opened;
    },
    open: () => {
      isOpen = true;
      release();
    },
  };
}

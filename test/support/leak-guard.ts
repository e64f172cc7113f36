import { afterEach } from 'vitest';

type Close = () => void | Promise<void>;

const open = new Map<number, { label: string; close: Close }>();
let nextId = 1;

/**
 * Registers something a test starts (a consumer, a pool, a child process). The returned function
 * closes it and takes it off the list; whatever is still listed after a test fails that test.
 */
export function track(label: string, close: Close): () => Promise<void> {
  const id = nextId++;
  open.set(id, { label, close });
  return async () => {
    if (!open.delete(id)) return;
    await close();
  };
}

/** Call once per test file: an afterEach that fails a test which left something running. */
export function installLeakGuard(): void {
  afterEach(async () => {
    if (open.size === 0) return;
    const leftovers = [...open.values()];
    open.clear();
    await Promise.allSettled(leftovers.map((entry) => entry.close()));
    throw new Error(`the test left running: ${leftovers.map((entry) => entry.label).join(', ')} (closed now)`);
  });
}

import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

type Close = () => void | Promise<void>;
type Scope = 'test' | 'file';

const open = new Map<number, { label: string; close: Close; scope: Scope }>();
let nextId = 1;
let insideTest = false;

/**
 * Registers something a test starts (a consumer, a pool, a child process). The returned function
 * closes it and takes it off the list. What a test starts must be closed by the end of that test;
 * what a beforeAll starts, by the end of the file. Anything left fails the test (or the file).
 */
export function track(label: string, close: Close): () => Promise<void> {
  const id = nextId++;
  open.set(id, { label, close, scope: insideTest ? 'test' : 'file' });
  return async () => {
    if (!open.delete(id)) return;
    await close();
  };
}

async function failOnLeftovers(scope: Scope): Promise<void> {
  const leftovers = [...open.entries()].filter(([, entry]) => entry.scope === scope);
  if (leftovers.length === 0) return;
  for (const [id] of leftovers) open.delete(id);
  // Last started, first closed, one at a time, as a program releases: a consumer stops before the
  // pool it writes through ends (a pool ending under a consumer's queued query never answers it).
  for (const [, entry] of leftovers.reverse())
    await Promise.resolve()
      .then(entry.close)
      .catch(() => undefined);
  const where = scope === 'test' ? 'the test' : 'the test file (beforeAll without afterAll cleanup)';
  throw new Error(`${where} left running: ${leftovers.map(([, entry]) => entry.label).join(', ')} (closed now)`);
}

/**
 * Call once per test file: fails a test, or the file, that leaves a consumer, pool or process
 * running. The suite runs its files in one module cache (--no-isolate), so what a file without the
 * guard left tracked is still here when the next guarded file starts: that file fails first, naming
 * it as an earlier file's, rather than blaming its own first test.
 */
export function installLeakGuard(): void {
  beforeAll(async () => {
    insideTest = false;
    const left = [...open.values()].map((entry) => entry.label);
    if (left.length === 0) return;
    for (const scope of ['test', 'file'] as const) await failOnLeftovers(scope).catch(() => undefined);
    throw new Error(`an earlier test file left running: ${left.join(', ')} (closed now)`);
  });
  beforeEach(() => {
    insideTest = true;
  });
  afterEach(async () => {
    insideTest = false;
    await failOnLeftovers('test');
  });
  afterAll(() => failOnLeftovers('file'));
}

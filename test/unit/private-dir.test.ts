/**
 * The stack's state folders (its home, the folder under /var/tmp that holds clusters and the
 * Postgres binaries as root): created owner-only, refused when someone else could have made them.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureStackHome } from '../../stack/launcher.js';
import { stackLayout } from '../../stack/config.js';
import { ensurePrivateDir, privateDirProblem } from '../../stack/private-dir.js';

const root = mkdtempSync(join(tmpdir(), 'private-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;

describe('ensurePrivateDir', () => {
  it('creates a missing folder owner-only, whatever the umask', () => {
    const previous = process.umask(0);
    try {
      ensurePrivateDir(join(root, 'fresh'));
      ensurePrivateDir(join(root, 'traversable'), { mode: 0o711 });
    } finally {
      process.umask(previous);
    }
    expect(mode(join(root, 'fresh'))).toBe(0o700);
    expect(mode(join(root, 'traversable'))).toBe(0o711);
  });

  it('accepts a folder of ours that only we may write to', () => {
    mkdirSync(join(root, 'ours'), { mode: 0o755 });
    chmodSync(join(root, 'ours'), 0o755);
    expect(() => ensurePrivateDir(join(root, 'ours'))).not.toThrow();
  });

  it.each([
    [0o777, /writable by every user \(mode 777\)/],
    [0o775, /writable by its group \(mode 775\)/],
  ])('refuses a pre-created folder with mode %o, naming the fix', (bits, problem) => {
    const path = join(root, `open-${bits.toString(8)}`);
    mkdirSync(path);
    chmodSync(path, bits);
    expect(() => ensurePrivateDir(path)).toThrow(problem);
    expect(() => ensurePrivateDir(path)).toThrow(new RegExp(`remove it \\(rm -rf ${path}\\)`));
  });

  it('refuses a symbolic link where a folder is expected', () => {
    mkdirSync(join(root, 'target'), { mode: 0o700 });
    symlinkSync(join(root, 'target'), join(root, 'link'));
    expect(() => ensurePrivateDir(join(root, 'link'))).toThrow(/is a symbolic link/);
    expect(() => ensurePrivateDir(join(root, 'link'), { followSymlink: true })).not.toThrow();
  });

  it('refuses a pre-created folder owned by another user', () => {
    const path = join(root, 'theirs');
    mkdirSync(path, { mode: 0o700 });
    // Seen by a user other than its owner: the check is the same whoever runs the test.
    const owner = statSync(path).uid;
    expect(privateDirProblem(statSync(path), false, owner + 1)).toBe(
      `is owned by uid ${owner}, not by this user (uid ${owner + 1})`,
    );
    expect(privateDirProblem(statSync(path), false, owner)).toBeUndefined();
  });
});

describe('the stack home', () => {
  it('is created private (0711 as root, for the postgres OS user to reach its cluster; else 0700)', () => {
    const layout = stackLayout({ ...process.env, STACK_HOME: join(root, 'home', '.stack') });
    ensureStackHome(layout);
    expect(mode(layout.home)).toBe(process.getuid?.() === 0 ? 0o711 : 0o700);
  });

  it('is refused when another user could have made it', () => {
    const home = join(root, 'world', '.stack');
    mkdirSync(home, { recursive: true });
    chmodSync(home, 0o777);
    expect(() => ensureStackHome(stackLayout({ ...process.env, STACK_HOME: home }))).toThrow(/writable by every user/);
  });
});

/**
 * The stack's state folders: created owner-only, and refused when they already exist in a shape
 * another user could have made (theirs, writable by others, or a symbolic link where none is
 * expected). As root the stack runs what it finds there (the Postgres binaries it unpacked, say),
 * so a folder someone else created first would let them run programs as root.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';

export interface PrivateDirOptions {
  /** Mode of a folder created here: 0700 unless another OS user must traverse it (0711). */
  mode?: number;
  /** Whether the path may be a symbolic link to a folder of ours (a stack home shared by checkouts). */
  followSymlink?: boolean;
}

/** What is wrong with an existing folder, or undefined when it is ours and only we may write to it. */
export function privateDirProblem(stat: Stats, isLink: boolean, uid = process.getuid?.()): string | undefined {
  if (isLink) return 'is a symbolic link';
  if (!stat.isDirectory()) return 'is not a folder';
  if (uid !== undefined && stat.uid !== uid) return `is owned by uid ${stat.uid}, not by this user (uid ${uid})`;
  if ((stat.mode & 0o022) !== 0)
    return `is writable by ${(stat.mode & 0o002) !== 0 ? 'every user' : 'its group'} (mode ${(stat.mode & 0o777).toString(8)})`;
  return undefined;
}

/** Creates `path` with `mode` (its parent must exist, or is made), or checks the folder already there. */
export function ensurePrivateDir(path: string, options: PrivateDirOptions = {}): void {
  const mode = options.mode ?? 0o700;
  mkdirSync(dirname(path), { recursive: true });
  try {
    mkdirSync(path, { mode });
    chmodSync(path, mode); // the umask may have taken bits away; never adds any beyond mode
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const link = lstatSync(path);
  const isLink = link.isSymbolicLink() && options.followSymlink !== true;
  const problem = privateDirProblem(link.isSymbolicLink() && !isLink ? statSync(path) : link, isLink);
  if (problem === undefined) return;
  throw new Error(
    `${path} ${problem}: the stack keeps its state there and runs programs from it, so another user could have made it to take the stack over. ` +
      `Check what is in it, then remove it (rm -rf ${path}) and start again, or make it yours and private (chown ${process.getuid?.() ?? ''} ${path}; chmod go-w ${path}) if it is the stack's own`,
  );
}

/**
 * Writes a file only its owner may read or write (0600), also when it existed with other modes:
 * the mode is narrowed before the content goes in, so a secret is never readable by others.
 */
export function writePrivateFile(path: string, content: string): void {
  if (existsSync(path)) chmodSync(path, 0o600);
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600); // the umask may have taken bits away from a new file's mode; never adds any
}

/**
 * Which modules a node imports for its peers under a `remoteSpawn` list of directories.
 *
 * The check runs on what `import()` would load, never on the text a peer sent: a prefix test on
 * the raw URL let `allowed/../x` and `allowed/%2e%2e/x` through, since `import()` normalises them
 * afterwards. So the URL is parsed (which resolves `..` and `%2e%2e`), encoded separators are
 * refused outright, and the module and every allowed directory are taken to their real paths (a
 * symlink inside an allowed directory must not lead out of it). The module is then imported by the
 * URL of the real path that was checked.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InvalidNodeOption, RemoteSpawnRefused } from './errors.js';

/** Longer module URLs are refused before any parsing (a path is at most 4 KiB on Linux). */
const MAX_MODULE_URL_LENGTH = 8_192;
/** Allowed directories at most, checked one by one on each spawn. */
export const MAX_REMOTE_SPAWN_DIRS = 64;

/** `remoteSpawn`'s list as absolute directory paths: each entry is a `file:` URL or an absolute path. */
export function spawnDirectories(list: readonly unknown[]): string[] {
  if (list.length > MAX_REMOTE_SPAWN_DIRS) throw new InvalidNodeOption('remoteSpawn', `at most ${MAX_REMOTE_SPAWN_DIRS} directories (MAX_REMOTE_SPAWN_DIRS), got ${list.length}`);
  return list.map((entry) => {
    if (typeof entry !== 'string' || entry.length === 0) throw new InvalidNodeOption('remoteSpawn', 'must be a boolean or a list of directories (file: URLs or absolute paths)');
    if (isAbsolute(entry)) return resolve(entry);
    try {
      return resolve(fileURLToPath(new URL(entry)));
    } catch {
      throw new InvalidNodeOption('remoteSpawn', `${JSON.stringify(entry.slice(0, 300))} is neither a file: URL nor an absolute path`);
    }
  });
}

/** The `file:` URL to import for `moduleUrl`, if its real path lies inside one of `dirs`; RemoteSpawnRefused otherwise. */
export async function allowedModuleUrl(dirs: readonly string[], moduleUrl: string): Promise<string> {
  if (moduleUrl.length > MAX_MODULE_URL_LENGTH) throw new RemoteSpawnRefused('not_file', moduleUrl, `longer than ${MAX_MODULE_URL_LENGTH} characters`);
  // An encoded separator is never part of an honest path; decoding it would split a segment in two.
  if (/%2f|%5c/i.test(moduleUrl)) throw new RemoteSpawnRefused('encoded_separator', moduleUrl, 'an encoded / or \\ in the URL');
  const path = filePath(moduleUrl);
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new RemoteSpawnRefused('not_found', moduleUrl, 'no such file on this node');
  }
  for (const dir of dirs) {
    let realDir: string;
    try {
      realDir = await realpath(dir);
    } catch {
      continue; // A directory that does not exist allows nothing.
    }
    if (inside(realDir, real)) return pathToFileURL(real).href;
  }
  throw new RemoteSpawnRefused('outside', moduleUrl, `${real} is outside every remoteSpawn directory`);
}

/** The local path a module URL (or absolute path) names, with `.` and `..` resolved. */
function filePath(moduleUrl: string): string {
  if (isAbsolute(moduleUrl)) return resolve(moduleUrl);
  let url: URL;
  try {
    url = new URL(moduleUrl);
  } catch {
    throw new RemoteSpawnRefused('not_file', moduleUrl, 'not a file: URL or an absolute path');
  }
  if (url.protocol !== 'file:') throw new RemoteSpawnRefused('not_file', moduleUrl, `a ${url.protocol} URL, not file:`);
  // A query or fragment would import a second instance of the module under another key.
  if (url.search !== '' || url.hash !== '') throw new RemoteSpawnRefused('not_file', moduleUrl, 'a query or fragment in the URL');
  try {
    return resolve(fileURLToPath(url));
  } catch (error) {
    throw new RemoteSpawnRefused('not_file', moduleUrl, error instanceof Error ? error.message : String(error));
  }
}

/** Whether `path` lies strictly inside `dir` (so `/app/allowed-evil` is not inside `/app/allowed`). */
function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !isAbsolute(rel) && rel.split(sep)[0] !== '..';
}

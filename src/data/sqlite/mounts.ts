/**
 * WAL needs shared memory and POSIX locks that work between every process using the file, which
 * network filesystems do not provide reliably (sqlite.org/wal.html). So a file whose directory is
 * mounted from the network is refused, by the mount table in /proc/mounts.
 */
import { readFile, realpath } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { NetworkFilesystem } from '../errors.js';

/** Filesystem types whose locking or shared memory cannot be trusted across hosts. */
export const NETWORK_FILESYSTEMS: ReadonlySet<string> = new Set([
  'nfs',
  'nfs4',
  'cifs',
  'smb',
  'smb2',
  'smb3',
  'smbfs',
  '9p',
  'afs',
  'ceph',
  'glusterfs',
  'lustre',
  'gpfs',
  'ocfs2',
  'gfs2',
  'davfs',
  'ncpfs',
  'coda',
  'fuse.sshfs',
  'fuse.glusterfs',
  'fuse.ceph',
  'fuse.cephfs',
  'fuse.s3fs',
  'fuse.rclone',
  'fuse.gcsfuse',
  'fuse.davfs2',
]);

export interface Mount {
  readonly device: string;
  readonly mountPoint: string;
  readonly fsType: string;
}

/** /proc/mounts writes space, tab, newline and backslash in paths as octal escapes. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The mount table, from /proc/mounts text; malformed lines are skipped. */
export function parseMounts(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 3) continue;
    mounts.push({ device: unescapeMountField(fields[0]!), mountPoint: unescapeMountField(fields[1]!), fsType: fields[2]!.toLowerCase() });
  }
  return mounts;
}

/** The mount holding `path` (absolute, symlinks resolved): the longest mount point that prefixes it; the last one wins when stacked. */
export function mountOf(mounts: readonly Mount[], path: string): Mount | undefined {
  let best: Mount | undefined;
  for (const mount of mounts) {
    const point = mount.mountPoint;
    const covers = point === '/' || path === point || path.startsWith(point.endsWith(sep) ? point : point + sep);
    if (covers && (best === undefined || point.length >= best.mountPoint.length)) best = mount;
  }
  return best;
}

export function isNetworkFilesystem(fsType: string): boolean {
  const type = fsType.toLowerCase();
  return NETWORK_FILESYSTEMS.has(type) || type.startsWith('nfs') || type.startsWith('smb');
}

/** The network mount `path` lives on, or undefined when it is local (pure: takes the /proc/mounts text). */
export function networkMountOf(mountsText: string, path: string): Mount | undefined {
  const mount = mountOf(parseMounts(mountsText), path);
  return mount !== undefined && isNetworkFilesystem(mount.fsType) ? mount : undefined;
}

/**
 * Throws NetworkFilesystem when the directory of `file` is on a network mount. Where there is no
 * /proc/mounts (not Linux), nothing is checked.
 */
export async function refuseNetworkFilesystem(file: string, mountsPath = '/proc/mounts'): Promise<void> {
  let text: string;
  try {
    text = await readFile(mountsPath, 'utf8');
  } catch {
    return;
  }
  const directory = await realpath(dirname(resolve(file)));
  const mount = networkMountOf(text, directory);
  if (mount !== undefined) throw new NetworkFilesystem(file, mount.fsType);
}

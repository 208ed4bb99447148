/**
 * Files on network filesystems are refused, by the mount table (/proc/mounts): a pure
 * classification over fixture text, and the real table for a real temp file.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NetworkFilesystem } from '../../../src/data/index.js';
import { isNetworkFilesystem, mountOf, networkMountOf, parseMounts, refuseNetworkFilesystem } from '../../../src/data/sqlite/index.js';
import { tempDir } from './support.js';

const MOUNTS = `
/dev/nvme0n1p2 / ext4 rw,relatime 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
tmpfs /tmp tmpfs rw,nosuid,nodev 0 0
fileserver:/export/home /home nfs4 rw,relatime,vers=4.2 0 0
//nas/share /mnt/nas cifs rw,relatime 0 0
nas2:/data /mnt/nas/local ext4 rw 0 0
user@host:/srv /mnt/ssh fuse.sshfs rw,nosuid 0 0
host0 /mnt/9p 9p rw,trans=virtio 0 0
/dev/sdb1 /mnt/with\\040space ext4 rw 0 0
gluster:/vol /var/gluster glusterfs rw 0 0
ceph-mon:/ /var/ceph ceph rw 0 0
garbage
`;

describe('mount classification (pure)', () => {
  it('parses /proc/mounts, octal escapes included', () => {
    const mounts = parseMounts(MOUNTS);
    expect(mounts).toHaveLength(11);
    expect(mounts.find((mount) => mount.fsType === 'ext4' && mount.mountPoint.includes('space'))!.mountPoint).toBe('/mnt/with space');
  });

  it('finds the mount of a path by the longest prefix, on path boundaries', () => {
    const mounts = parseMounts(MOUNTS);
    expect(mountOf(mounts, '/home/ada/app')!.fsType).toBe('nfs4');
    expect(mountOf(mounts, '/homework')!.fsType).toBe('ext4');
    expect(mountOf(mounts, '/mnt/nas/local/db')!.fsType).toBe('ext4');
    expect(mountOf(mounts, '/mnt/nas/other')!.fsType).toBe('cifs');
    expect(mountOf(mounts, '/tmp/x')!.fsType).toBe('tmpfs');
    expect(mountOf(mounts, '/')!.fsType).toBe('ext4');
  });

  it('classifies network filesystems', () => {
    for (const type of ['nfs', 'nfs4', 'cifs', 'smb3', 'smbfs', '9p', 'fuse.sshfs', 'ceph', 'glusterfs', 'afs']) expect(isNetworkFilesystem(type)).toBe(true);
    for (const type of ['ext4', 'xfs', 'btrfs', 'tmpfs', 'overlay', 'zfs', 'fuse.gocryptfs']) expect(isNetworkFilesystem(type)).toBe(false);
    expect(networkMountOf(MOUNTS, '/home/ada')!.fsType).toBe('nfs4');
    expect(networkMountOf(MOUNTS, '/mnt/ssh/db')!.fsType).toBe('fuse.sshfs');
    expect(networkMountOf(MOUNTS, '/mnt/9p/db')!.fsType).toBe('9p');
    expect(networkMountOf(MOUNTS, '/var/gluster/x')!.fsType).toBe('glusterfs');
    expect(networkMountOf(MOUNTS, '/var/ceph/x')!.fsType).toBe('ceph');
    expect(networkMountOf(MOUNTS, '/mnt/nas/local/db')).toBeUndefined();
    expect(networkMountOf(MOUNTS, '/srv/app/db')).toBeUndefined();
  });
});

describe('refusing a file', () => {
  it('accepts a real temp file by the real /proc/mounts', async () => {
    const dir = tempDir();
    try {
      await expect(refuseNetworkFilesystem(join(dir, 'ok.db'))).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses with NetworkFilesystem when the directory is on a network mount', async () => {
    const dir = tempDir();
    try {
      const table = join(dir, 'mounts');
      mkdirSync(join(dir, 'share'));
      writeFileSync(table, `/dev/root / ext4 rw 0 0\nfiler:/vol ${dir}/share nfs rw 0 0\n`);
      const error = (await refuseNetworkFilesystem(join(dir, 'share', 'app.db'), table).catch((e: unknown) => e)) as NetworkFilesystem;
      expect(error).toBeInstanceOf(NetworkFilesystem);
      expect(error.fsType).toBe('nfs');
      expect(error.path).toBe(join(dir, 'share', 'app.db'));
      expect(error.message).toMatch(/network filesystem/);
      await expect(refuseNetworkFilesystem(join(dir, 'local.db'), table)).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

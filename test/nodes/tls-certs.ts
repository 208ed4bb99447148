/**
 * Throwaway certificates for TLS tests, made by `openssl` in a temp dir: a CA and a certificate it
 * signs for 127.0.0.1 (server and client use). The dir is removed after the file's tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeTlsOptions } from '../../src/nodes/index.js';
import { afterEachFile } from '../support/file-hooks.js';

let dir: string | undefined;
afterEachFile(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function openssl(cwd: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA named `name`, and a node certificate it signs. */
export function authority(name: string): NodeTlsOptions {
  dir ??= mkdtempSync(join(tmpdir(), 'molo-tls-'));
  const cwd = dir;
  openssl(cwd, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}-ca.key`, '-out', `${name}-ca.crt`, '-days', '1', '-subj', `/CN=${name} test CA`);
  openssl(cwd, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name} node`);
  writeFileSync(join(cwd, `${name}.ext`), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(cwd, 'x509', '-req', '-in', `${name}.csr`, '-CA', `${name}-ca.crt`, '-CAkey', `${name}-ca.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
  const read = (file: string): string => readFileSync(join(cwd, file), 'utf8');
  return { key: read(`${name}.key`), cert: read(`${name}.crt`), ca: read(`${name}-ca.crt`) };
}

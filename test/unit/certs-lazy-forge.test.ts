// A no-op `certs` (pki/ complete) never loads node-forge: only issuing a certificate needs it
// (src/certs/pem.ts reads and writes PEM without it). A run that issues loads it, so the check
// can fail. Also PEM splitting and encoding as issue.ts did them.
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { pemBlocks, toPem } from '../../src/certs/pem.ts';

const BIN = fileURLToPath(new URL('../../bin/hardway.mjs', import.meta.url));

describe('node-forge is loaded only to issue', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hw-lazy-forge-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'machines.txt'), '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n');
  const probe = join(dir, 'modules.mjs');
  writeFileSync(probe, "import Module from 'node:module';\nprocess.on('exit', () => process.stderr.write(`forge loaded: ${Object.keys(Module._cache).some((k) => k.includes('node-forge'))}\\n`));\n");
  const certs = () => spawnSync(process.execPath, ['--import', probe, BIN, 'certs'], { cwd: dir, encoding: 'utf8' });

  it('loads it for a fresh pki/, and not for a rerun that keeps everything', () => {
    const first = certs();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain('forge loaded: true');
    const again = certs();
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/issued/);
    expect(again.stderr).toContain('forge loaded: false');
    // pem.ts reads what issuing wrote: the CA's one block, and it round-trips through DER.
    const ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    expect(pemBlocks(ca)).toEqual([ca]);
    expect(toPem(new X509Certificate(ca).raw)).toBe(ca);
    expect(pemBlocks(ca + ca)).toEqual([ca, ca]);
    expect(pemBlocks('not pem')).toEqual(['not pem']);
  }, 60_000);
});

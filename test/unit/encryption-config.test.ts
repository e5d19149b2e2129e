// `hardway encryption-config`: a 32-byte aescbc key made once, kept on rerun, never printed.
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { hardway, makeProject } from './certs.helpers.ts';

const FILE = 'pki/encryption-config.yaml';

describe('hardway encryption-config', () => {
  it('writes an EncryptionConfiguration: aescbc key1 (32 random bytes) then identity, mode 0600', async () => {
    const p = makeProject();
    const run = await hardway(p, 'encryption-config');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^written pki\/encryption-config\.yaml /);
    const text = readFileSync(join(p.dir, FILE), 'utf8');
    const doc = parse(text);
    expect(doc.kind).toBe('EncryptionConfiguration');
    expect(doc.apiVersion).toBe('apiserver.config.k8s.io/v1');
    expect(doc.resources).toHaveLength(1);
    expect(doc.resources[0].resources).toEqual(['secrets']);
    const [aescbc, identity] = doc.resources[0].providers;
    expect(identity).toEqual({ identity: {} });
    expect(aescbc.aescbc.keys).toHaveLength(1);
    expect(aescbc.aescbc.keys[0].name).toBe('key1');
    const secret: string = aescbc.aescbc.keys[0].secret;
    expect(Buffer.from(secret, 'base64')).toHaveLength(32);
    expect(Buffer.from(secret, 'base64').toString('base64')).toBe(secret);
    expect(run.stdout + run.stderr).not.toContain(secret);
    expect(statSync(join(p.dir, FILE)).mode & 0o777).toBe(0o600);
    expect(statSync(join(p.dir, 'pki')).mode & 0o777).toBe(0o700);
  });

  it('a rerun keeps the key and rewrites nothing', async () => {
    const p = makeProject();
    await hardway(p, 'encryption-config');
    const before = readFileSync(join(p.dir, FILE));
    const mtime = statSync(join(p.dir, FILE)).mtimeMs;
    const run = await hardway(p, 'encryption-config');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('kept pki/encryption-config.yaml\n');
    expect(readFileSync(join(p.dir, FILE))).toEqual(before);
    expect(statSync(join(p.dir, FILE)).mtimeMs).toBe(mtime);
  });

  it('two projects get different keys', async () => {
    const [a, b] = [makeProject(), makeProject()];
    await hardway(a, 'encryption-config');
    await hardway(b, 'encryption-config');
    expect(readFileSync(join(a.dir, FILE), 'utf8')).not.toBe(readFileSync(join(b.dir, FILE), 'utf8'));
  });

  it('a file left too open is narrowed to 0600, content kept', async () => {
    const p = makeProject();
    await hardway(p, 'encryption-config');
    const before = readFileSync(join(p.dir, FILE));
    chmodSync(join(p.dir, FILE), 0o644);
    const run = await hardway(p, 'encryption-config');
    expect(run.stdout).toContain('fixed mode of pki/encryption-config.yaml (was 0644, now 0600)');
    expect(statSync(join(p.dir, FILE)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(p.dir, FILE))).toEqual(before);
  });

  it('an existing file that is not a usable config: exit 1, the file is left as it is', async () => {
    const p = makeProject();
    mkdirSync(join(p.dir, 'pki'), { mode: 0o700 });
    const broken = 'kind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - aescbc:\n          keys:\n            - name: key1\n              secret: c2hvcnQ=\n';
    writeFileSync(join(p.dir, FILE), broken, { mode: 0o600 });
    const run = await hardway(p, 'encryption-config');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: pki/encryption-config.yaml exists but its aescbc key is not 32 bytes; nothing was changed');
    expect(run.stderr).not.toContain('c2hvcnQ=');
    expect(readFileSync(join(p.dir, FILE), 'utf8')).toBe(broken);
  });
});

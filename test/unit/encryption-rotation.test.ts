// `hardway encryption-config --rotate`: the secrets' key replaced in four stages (add, promote,
// rewrite, drop), each distributed. Stages from a fresh config to the end, a rerun after a run
// stopped at every point (each distribute failing in turn, the rewrite failing, a kill between the
// last write and its distribute), --dry-run and --status for each state, and the rewrite of every
// Secret against a real HTTPS server on loopback (pages, a conflict, a Secret deleted meanwhile).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { CliContext } from '../../src/cli/command.ts';
import { encryptionState } from '../../src/certs/encryption-rotation.ts';
import { renderEncryptionKeys } from '../../src/certs/encryption.ts';
import { apiClientTls } from '../../src/cluster-api/credentials.ts';
import { HttpsEndpoint } from '../../src/cluster-api/https-endpoint.ts';
import { rewriteSecrets } from '../../src/cluster-api/rewrite-secrets.ts';
import { rotateEncryptionKey, rotationPlan, rotationStatus, type RotationDeps } from '../../src/commands/encryption-rotate.ts';
import { formatError, isExpectedError } from '../../src/errors.ts';
import { loadInventory } from '../../src/inventory.ts';
import { certifiedProject, hardway, makeProject } from './certs.helpers.ts';

const FILE = 'pki/encryption-config.yaml';
type Project = { dir: string; machines: string };

/** A project with its encryption config (key1). */
async function project(): Promise<Project> {
  const p = makeProject();
  expect((await hardway(p, 'encryption-config')).code).toBe(0);
  return p;
}

/** The keys of pki/'s config, in order: name and secret. */
const keys = (p: Project) => (parse(readFileSync(join(p.dir, FILE), 'utf8')) as { resources: { providers: { aescbc: { keys: { name: string; secret: string }[] } }[] }[] }).resources[0]!.providers[0]!.aescbc.keys;
const names = (p: Project) => keys(p).map((k) => k.name).join(',');

/** Fake machines and API: each call records what pki/ held then; `failAt` makes that call (1-based, over both) throw. */
function fakeDeps(p: Project, opts: { failAt?: number; changedFirst?: number } = {}) {
  const calls: string[] = [];
  const step = (what: string) => {
    calls.push(`${what} ${names(p)}`);
    if (calls.length === opts.failAt) throw new Error(`${what} failed (test)`);
  };
  const deps: RotationDeps = {
    async distribute() {
      step('distribute');
      return calls.length === 1 ? (opts.changedFirst ?? 0) : 0;
    },
    async rewriteSecrets() {
      step('rewrite');
      return 7;
    },
  };
  return { calls, deps };
}

/** Runs --rotate's work with `deps`; exit code and output, as the CLI would print them (other errors throw). */
async function rotate(p: Project, deps: RotationDeps) {
  const out = new PassThrough();
  let stdout = '';
  out.on('data', (c) => (stdout += c));
  try {
    return { code: await rotateEncryptionKey(loadInventory(p.machines), { stdout: out }, deps), stdout };
  } catch (e) {
    return { code: isExpectedError(e) ? e.exitCode : -1, stdout, error: isExpectedError(e) ? formatError(e) : (e as Error).message };
  }
}

const FULL = ['distribute key1', 'distribute key1,key2', 'distribute key2,key1', 'rewrite key2,key1', 'distribute key2'];

describe('encryption-config --rotate', () => {
  it('fresh: add, promote, rewrite, drop, each distributed before the next is written; the old key kept until every Secret is rewritten; no key printed', async () => {
    const p = await project();
    const [key1] = keys(p);
    const { calls, deps } = fakeDeps(p);
    const r = await rotate(p, deps);
    expect(r.code, r.error).toBe(0);
    expect(calls).toEqual(FULL);
    expect(names(p)).toBe('key2');
    const [key2] = keys(p);
    expect(Buffer.from(key2!.secret, 'base64')).toHaveLength(32);
    expect(key2!.secret).not.toBe(key1!.secret);
    expect(statSync(join(p.dir, FILE)).mode & 0o777).toBe(0o600);
    for (const s of ['1/4 (add): key2, a new random key, joins pki/encryption-config.yaml behind key1', '2/4 (promote): key2 encrypts now, key1 still decrypts',
      '3/4 (rewrite): 7 Secret(s) written again', '4/4 (drop): key1 leaves']) expect(r.stdout).toContain(`encryption key rotation ${s}`);
    expect(r.stdout).not.toContain(key1!.secret);
    expect(r.stdout).not.toContain(key2!.secret);
    // Converged: encryption-config without --rotate keeps the rotated file byte for byte.
    const before = readFileSync(join(p.dir, FILE));
    expect((await hardway(p, 'encryption-config')).stdout).toContain('kept pki/encryption-config.yaml');
    expect(readFileSync(join(p.dir, FILE))).toEqual(before);
    // Another rotation goes on from key2 to key3.
    const again = fakeDeps(p);
    expect((await rotate(p, again.deps)).code).toBe(0);
    expect(names(p)).toBe('key3');
  });

  it('stopped at any point (each distribute or the rewrite failing), a rerun goes on from there and ends like an uninterrupted one; the rewrite runs only once every machine holds the promoted config', async () => {
    for (let failAt = 1; failAt <= FULL.length; failAt++) {
      const p = await project();
      const key1 = keys(p)[0]!.secret;
      const first = fakeDeps(p, { failAt });
      const stopped = await rotate(p, first.deps);
      expect(stopped.code, `failAt ${failAt}`).toBe(-1);
      expect(first.calls).toEqual(FULL.slice(0, failAt));
      // Whatever was written stays decryptable: key1 is in the config until the drop.
      if (failAt < FULL.length) expect(keys(p).map((k) => k.secret)).toContain(key1);
      // The machines that missed the last distribute hold key2,key1 still: the rerun's first distribute changes them.
      const rerun = fakeDeps(p, failAt === FULL.length ? { changedFirst: 1 } : {});
      const done = await rotate(p, rerun.deps);
      if (failAt === FULL.length) {
        // The last distribute failed: pki/ holds key2 only, the rerun's first distribute installs it and stops there.
        expect(done.code).toBe(0);
        expect(rerun.calls).toEqual(['distribute key2']);
        continue;
      }
      expect(done.code, `failAt ${failAt}: ${done.error}`).toBe(0);
      expect(names(p)).toBe('key2');
      // The rerun starts with a distribute of the state pki/ was left in, and every rewrite comes after a distribute of the promoted config.
      expect(rerun.calls[0]).toBe(FULL[failAt - 1]!.replace('rewrite', 'distribute'));
      const i = rerun.calls.indexOf('rewrite key2,key1');
      expect(rerun.calls[i - 1]).toBe('distribute key2,key1');
    }
  });

  it('killed between the drop and its distribute: the next run distributes, says so and starts no new rotation', async () => {
    const p = await project();
    expect((await rotate(p, fakeDeps(p).deps)).code).toBe(0);
    const { calls, deps } = fakeDeps(p, { changedFirst: 1 });
    const r = await rotate(p, deps);
    expect(r.code).toBe(0);
    expect(calls).toEqual(['distribute key2']);
    expect(r.stdout).toContain('distribute changed 1 machine(s)');
    expect(r.stdout).toContain('Run hardway encryption-config --rotate --yes again to start a rotation');
    expect(names(p)).toBe('key2');
  });

  it('--dry-run says the next stage from pki/ alone, for each state; --status names the keys and each control plane', async () => {
    const p = await project();
    const inv = () => loadInventory(p.machines);
    expect(rotationPlan(inv()).join('\n')).toMatch(/holds key1 \(encrypts and decrypts\)\nwould first run hardway distribute[^\n]*\n1\/4 add: key2, a new random key, joins behind key1/);
    const [k1] = keys(p);
    const k2 = { name: 'key2', secret: Buffer.alloc(32, 7).toString('base64') };
    writeFileSync(join(p.dir, FILE), renderEncryptionKeys([k1!, k2]), { mode: 0o600 });
    expect(rotationPlan(inv())[1]).toContain('a rotation to key2 is under way');
    expect(rotationPlan(inv())[2]).toMatch(/^2\/4 promote: key2 goes first/);
    writeFileSync(join(p.dir, FILE), renderEncryptionKeys([k2, k1!]), { mode: 0o600 });
    expect(rotationPlan(inv())[2]).toMatch(/^3\/4 rewrite: every Secret/);
    expect(rotationPlan(inv()).join('\n')).not.toContain(k2.secret);

    const out = new PassThrough();
    let stdout = '';
    out.on('data', (c) => (stdout += c));
    const ctx: CliContext = { values: {}, positionals: [], stdout: out, stderr: new PassThrough(), cwd: p.dir, env: {} };
    expect(await rotationStatus(inv(), ctx, async () => [])).toBe(0);
    expect(stdout).toContain('pki/encryption-config.yaml: key2 (encrypts and decrypts), key1 (decrypts only)');
    expect(stdout).toContain('stage 2/4 (promote) done, 3/4 (rewrite) and 4/4 (drop) next');
    expect(stdout).toContain("  server: holds pki/'s config (key2, key1)");
    stdout = '';
    expect(await rotationStatus(inv(), ctx, async () => ['server (distribute would make 1 change(s))'])).toBe(1);
    expect(stdout).toContain('  server (distribute would make 1 change(s)): it may hold another config');
  });

  it('a config no stage of a rotation explains is refused, naming it, and nothing is written', async () => {
    const p = await project();
    const [k1] = keys(p);
    for (const [bad, said] of [
      [[k1!, { ...k1!, name: 'key2' }, { ...k1!, name: 'key3' }], 'holds 3 keys (key1, key2, key3): no stage of a rotation'],
      [[{ ...k1!, name: 'primary' }], 'has a key named "primary"'],
      [[k1!, { ...k1!, name: 'key1' }], 'holds 2 keys (key1, key1)'],
    ] as const) {
      writeFileSync(join(p.dir, FILE), renderEncryptionKeys(bad), { mode: 0o600 });
      const before = readFileSync(join(p.dir, FILE));
      const { calls, deps } = fakeDeps(p);
      const r = await rotate(p, deps);
      expect(r.code).toBe(1);
      expect(r.error).toContain(said);
      expect(calls).toEqual([]);
      expect(readFileSync(join(p.dir, FILE))).toEqual(before);
    }
    expect(() => encryptionState(makeProject().dir)).toThrow(/pki\/encryption-config.yaml is missing/);
  });

  it('the CLI: --rotate without --yes is refused (exit 2) with the lines to run; --dry-run and --yes without --rotate are usage errors; nothing changes', async () => {
    const p = await project();
    const before = readFileSync(join(p.dir, FILE));
    const refused = await hardway(p, 'encryption-config', '--rotate');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('"hardway encryption-config --rotate" would replace the encryption key of every Secret (a new rotation); it runs only with --yes');
    const dry = await hardway(p, 'encryption-config', '--rotate', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('nothing was changed (--dry-run)');
    expect((await hardway(p, 'encryption-config', '--dry-run')).code).toBe(2);
    expect((await hardway(p, 'encryption-config', '--yes')).code).toBe(2);
    expect((await hardway(p, 'encryption-config', '--rotate', '--status')).code).toBe(2);
    expect(readFileSync(join(p.dir, FILE))).toEqual(before);
  });
});

describe('rewriteSecrets against an HTTPS server on loopback', () => {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const c of closers.splice(0)) c();
  });

  it('lists page by page, writes each Secret back unchanged with kind and apiVersion, reads again on a conflict, skips one deleted meanwhile', async () => {
    const p = await certifiedProject();
    const secret = (ns: string, name: string) => ({ metadata: { namespace: ns, name, resourceVersion: '1' }, type: 'Opaque', data: { v: Buffer.from(`${ns}/${name}`).toString('base64') } });
    const pages = [[secret('default', 'a'), secret('kube-system', 'b')], [secret('default', 'gone'), secret('default', 'busy')]];
    const seen: { method: string; path: string; body: string }[] = [];
    let conflicts = 1;
    const f = (x: string) => readFileSync(join(p.dir, x));
    const server = createServer({ cert: f('pki/kube-api-server.crt'), key: f('pki/kube-api-server.key'), ca: f('pki/ca.crt'), requestCert: true, rejectUnauthorized: true }, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, path: req.url!, body });
        const url = new URL(req.url!, 'https://x');
        const answer = (status: number, o: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(o));
        };
        if (req.method === 'GET' && url.pathname === '/api/v1/secrets') {
          const second = url.searchParams.get('continue') === 'page2';
          return answer(200, { kind: 'SecretList', items: pages[second ? 1 : 0], metadata: second ? {} : { continue: 'page2' } });
        }
        if (url.pathname.endsWith('/gone')) return answer(404, { kind: 'Status', message: 'not found' });
        if (req.method === 'PUT' && url.pathname.endsWith('/busy') && conflicts-- > 0) return answer(409, { kind: 'Status', message: 'the object has been modified' });
        if (req.method === 'GET') return answer(200, { ...secret('default', 'busy'), metadata: { namespace: 'default', name: 'busy', resourceVersion: '2' } });
        return answer(200, JSON.parse(body));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const api = new HttpsEndpoint('127.0.0.1', (server.address() as AddressInfo).port, apiClientTls(loadInventory(p.machines)));
    closers.push(() => api.close());

    expect(await rewriteSecrets(api)).toBe(3);
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'GET /api/v1/secrets?limit=250',
      'PUT /api/v1/namespaces/default/secrets/a',
      'PUT /api/v1/namespaces/kube-system/secrets/b',
      'GET /api/v1/secrets?limit=250&continue=page2',
      'PUT /api/v1/namespaces/default/secrets/gone',
      'PUT /api/v1/namespaces/default/secrets/busy',
      'GET /api/v1/namespaces/default/secrets/busy',
      'PUT /api/v1/namespaces/default/secrets/busy',
    ]);
    expect(JSON.parse(seen[1]!.body)).toEqual({ ...secret('default', 'a'), kind: 'Secret', apiVersion: 'v1' });
    expect(JSON.parse(seen.at(-1)!.body).metadata.resourceVersion).toBe('2');
  });

  it('an error the API gives fails with its words and the Secret named', async () => {
    const p = await certifiedProject();
    const f = (x: string) => readFileSync(join(p.dir, x));
    const server = createServer({ cert: f('pki/kube-api-server.crt'), key: f('pki/kube-api-server.key'), ca: f('pki/ca.crt'), requestCert: true }, (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(req.method === 'GET' ? 200 : 403, { 'content-type': 'application/json' });
        res.end(JSON.stringify(req.method === 'GET' ? { items: [{ metadata: { namespace: 'default', name: 's' } }], metadata: {} } : { message: 'secrets "s" is forbidden' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const api = new HttpsEndpoint('127.0.0.1', (server.address() as AddressInfo).port, apiClientTls(loadInventory(p.machines)));
    closers.push(() => api.close());
    await expect(rewriteSecrets(api)).rejects.toThrow('rewriting Secret default/s: 403 Forbidden: secrets "s" is forbidden');
  });
});

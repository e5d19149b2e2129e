// The secrets' encryption key rotated on a running cluster (issue 37), on the shared 1+2 lab
// (test/e2e/helpers/shared-lab.ts) with the real Kubernetes v1.20.2 binaries: `hardway
// encryption-config --rotate --yes` adds a key, promotes it, rewrites every Secret through the API
// and drops the old key, distributing each stage. Proven from etcd itself (etcdctl on the server):
// every Secret's value starts `k8s:enc:aescbc:v1:<new key>:`; every Secret reads back through the API
// as before; no control plane's config names the old key; a second `up` changes nothing. The new key
// stays (the cluster stays usable for the suites after this one).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { WEB_IMAGE } from '../../src/images/names.ts';
import type { Lab } from './helpers/lab.ts';
import { useSharedCluster } from './helpers/shared-lab.ts';
import { eventually, failures, jumpboxKubectl, remoteSha256, runJson } from './helpers/cluster.ts';

const lab = useSharedCluster();
const READY = ['node-0 True', 'node-1 True'];
/** Secrets this suite makes (and leaves: they are ordinary Secrets, encrypted like any other). */
const MADE = [['default', 'e2e-rotation-a'], ['kube-system', 'e2e-rotation-b']] as const;

/** `name Ready-status` of every node. */
async function nodes(l: Lab): Promise<string[]> {
  const out = await jumpboxKubectl(l, ['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
  return out.trim().split('\n').sort();
}

/** Every Secret through the API: `namespace/name` -> its type and data, as read. */
async function secretsByApi(l: Lab): Promise<Map<string, string>> {
  const list = JSON.parse(await jumpboxKubectl(l, ['get', 'secrets', '-A', '-o', 'json'])) as { items: { metadata: { namespace: string; name: string }; type: string; data?: object }[] };
  return new Map(list.items.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, JSON.stringify({ type: s.type, data: s.data ?? {} })]));
}

/** The names of the aescbc keys of pki/encryption-config.yaml, in order. */
function pkiKeyNames(l: Lab): string[] {
  const doc = parse(readFileSync(join(l.dir, 'pki/encryption-config.yaml'), 'utf8')) as { resources: { providers: { aescbc?: { keys: { name: string }[] } }[] }[] };
  return doc.resources[0]!.providers[0]!.aescbc!.keys.map((k) => k.name);
}

/** Every Secret's etcd key with the first bytes of its stored value (as long as `prefix`), read with etcdctl on `server`. */
async function storedPrefixes(l: Lab, server: string, prefix: string): Promise<Map<string, string>> {
  const etcdctl = 'ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert=/etc/etcd/ca.crt --cert=/var/lib/kubernetes/etcd-client.crt --key=/var/lib/kubernetes/etcd-client.key --command-timeout=10s';
  // A Secret deleted between the listing and its read (a namespace another suite deleted, still
  // terminating) has no value left: it is not listed.
  const out = await l.run(server, `for k in $(${etcdctl} get --prefix --keys-only /registry/secrets/); do v=$(${etcdctl} get "$k" --print-value-only | head -c ${prefix.length} | tr -c '[:print:]' '?'); [ -z "$v" ] || printf '%s %s\\n' "$k" "$v"; done`);
  return new Map(out.trim().split('\n').filter(Boolean).map((line) => {
    const at = line.indexOf(' ');
    return [line.slice(0, at), line.slice(at + 1)] as const;
  }));
}

describe('encryption key rotation on a running 1-server 2-worker cluster (real v1.20.2 binaries)', () => {
  beforeAll(async () => {
    const l = lab();
    const up = await runJson(l, ['up', '--ready-timeout', '180']);
    expect(failures(up.json), up.stderr).toEqual({});
    await eventually(async () => expect(await nodes(l)).toEqual(READY), 180);
    for (const [ns, name] of MADE) {
      await jumpboxKubectl(l, ['-n', ns, 'delete', 'secret', name, '--ignore-not-found']);
      await jumpboxKubectl(l, ['-n', ns, 'create', 'secret', 'generic', name, `--from-literal=value=${name}-${Date.now()}`]);
    }
  });

  it('--rotate --yes: every Secret stored under the new key in etcd and unchanged through the API, the old key gone from every control plane, a second up changes nothing', async () => {
    const l = lab();
    const servers = l.machines.filter((m) => m.role === 'control-plane').map((m) => m.hostname);
    const [old] = pkiKeyNames(l) as [string];
    const fresh = `key${Number(old.slice(3)) + 1}`;
    const before = await secretsByApi(l);
    for (const [ns, name] of MADE) expect(before.has(`${ns}/${name}`)).toBe(true);
    const storedBefore = await storedPrefixes(l, servers[0]!, `k8s:enc:aescbc:v1:${old}:`);
    expect([...storedBefore.values()].every((v) => v === `k8s:enc:aescbc:v1:${old}:`), JSON.stringify([...storedBefore])).toBe(true);

    const dry = await l.hardway(['encryption-config', '--rotate', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`1/4 add: ${fresh}, a new random key, joins behind ${old}`);
    expect(pkiKeyNames(l)).toEqual([old]);

    const rotate = await l.hardway(['encryption-config', '--rotate', '--yes']);
    expect(rotate.code, `${rotate.stdout}\n${rotate.stderr}`).toBe(0);
    for (const stage of ['1/4 (add)', '2/4 (promote)', '3/4 (rewrite)', '4/4 (drop)']) expect(rotate.stdout).toContain(`encryption key rotation ${stage}`);
    expect(pkiKeyNames(l)).toEqual([fresh]);
    // No key ever reaches output.
    const secret = (parse(readFileSync(join(l.dir, 'pki/encryption-config.yaml'), 'utf8')) as { resources: { providers: { aescbc: { keys: { secret: string }[] } }[] }[] }).resources[0]!.providers[0]!.aescbc.keys[0]!.secret;
    expect(rotate.stdout + rotate.stderr).not.toContain(secret);

    // etcd: every Secret (those made before and any made since) stored under the new key.
    const stored = await storedPrefixes(l, servers[0]!, `k8s:enc:aescbc:v1:${fresh}:`);
    expect(stored.size).toBeGreaterThanOrEqual(before.size);
    expect([...stored].filter(([, v]) => v !== `k8s:enc:aescbc:v1:${fresh}:`)).toEqual([]);
    // The API: every Secret reads back as it was.
    const after = await secretsByApi(l);
    for (const [key, value] of before) expect(after.get(key), key).toBe(value);
    // Every control plane holds pki/'s config, which names the new key only.
    const sha = createHash('sha256').update(readFileSync(join(l.dir, 'pki/encryption-config.yaml'))).digest('hex');
    for (const s of servers) {
      expect([...(await remoteSha256(l, s, ['/var/lib/kubernetes/encryption-config.yaml'])).values()]).toEqual([sha]);
      expect(await l.run(s, `grep -c 'name: ${old}$' /var/lib/kubernetes/encryption-config.yaml || true`)).toBe('0\n');
    }
    const status = await l.hardway(['encryption-config', '--status']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.stdout).toContain(`pki/encryption-config.yaml: ${fresh} (encrypts and decrypts)`);

    // A second up changes nothing; the nodes are still Ready.
    const up = await runJson(l, ['up']);
    expect(failures(up.json), up.stderr).toEqual({});
    expect(up.json.changed, JSON.stringify(up.json.results.filter((r) => r.status !== 'unchanged'))).toBe(0);
    expect(await nodes(l)).toEqual(READY);

    // smoke writes a Secret of its own and finds it stored under the new key (it once looked for key1 alone).
    const smoke = await l.hardway(['smoke', '--web-image', WEB_IMAGE]);
    expect(smoke.code, `${smoke.stdout}\n${smoke.stderr}`).toBe(0);
    expect(smoke.stdout + smoke.stderr).toContain(`secret stored encrypted in etcd (k8s:enc:aescbc:v1:${fresh})`);
    await jumpboxKubectl(l, ['delete', 'deployment,service', 'hardway-smoke', '--ignore-not-found']);
  });
});

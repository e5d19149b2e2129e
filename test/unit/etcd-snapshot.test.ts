// `hardway etcd snapshot save|restore`: the snapshot file check, the restore plan for 1 and 3
// members, the restore run against fake machines (order, failure state, cleanup), save with a
// stand-in for the jumpbox's etcdctl, and the arguments and errors through main().
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { etcdClusterToken, etcdInitialCluster } from '../../src/render/control-plane.ts';
import { restorePlan, STAGING_DIR } from '../../src/etcd-snapshot/restore-plan.ts';
import { restoreSnapshot } from '../../src/etcd-snapshot/restore.ts';
import { saveSnapshot } from '../../src/etcd-snapshot/save.ts';
import { checkSnapshotFile, parseSnapshotStatus, type SnapshotStatus } from '../../src/etcd-snapshot/snapshot-file.ts';
import { FailureError, InputError } from '../../src/errors.ts';
import type { Command } from '../../src/shell.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import { runCli } from '../helpers/cli.ts';
import { inventoryOf, MACHINES } from './engine.helpers.ts';

const THREE = `10.240.0.10 server-0.kubernetes.local server-0
10.240.0.11 server-1.kubernetes.local server-1
10.240.0.12 server-2.kubernetes.local server-2
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
`;

/** A file shaped as `etcdctl snapshot save` writes one: bbolt pages, then the SHA-256 of them. */
function fakeSnapshot(pages = 4, hashed = true): Buffer {
  const db = Buffer.alloc(4096 * pages);
  db.writeUInt32LE(0x04, 8); // meta page flag
  db.writeUInt32LE(0xed0cdaed, 16);
  db.writeUInt32LE(2, 20);
  db.writeUInt32LE(4096, 24);
  return hashed ? Buffer.concat([db, createHash('sha256').update(db).digest()]) : db;
}

const STATUS: SnapshotStatus = { hash: 0x1a2b3c4d, revision: 1234, totalKey: 567, totalSize: 16384 };
const tmp = () => mkdtempSync(join(tmpdir(), 'hw-etcd-'));
const sink = () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d) => (text += String(d)));
  return { out, text: () => text };
};

describe('the snapshot file check', () => {
  const dir = tmp();
  const file = (name: string, data: Buffer | string) => {
    writeFileSync(join(dir, name), data);
    return join(dir, name);
  };

  it('accepts a real snapshot saved by etcdctl 3.4.23', async () => {
    const real = join(import.meta.dirname, '../fixtures/etcd/snapshot-3.4.23.db');
    await expect(checkSnapshotFile(real, dir)).resolves.toBeUndefined();
  });

  it('accepts a bbolt database followed by its SHA-256', async () => {
    await expect(checkSnapshotFile(file('good.db', fakeSnapshot()), dir)).resolves.toBeUndefined();
  });

  it.each([
    ['a text file', 'notes.txt', 'hello\n'.repeat(1000), 'no bbolt database header'],
    ['a short file', 'short.db', 'hello\n', '6 bytes is too small for a database'],
    ['random bytes', 'random.db', Buffer.alloc(8224, 7), 'no bbolt database header'],
    ['a data directory db without the hash', 'member.db', fakeSnapshot(4, false), 'no integrity hash'],
  ])('refuses %s with exit 2 naming the file', async (_what, name, data, why) => {
    const e = await checkSnapshotFile(file(name, data), dir).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).message).toContain(`${name} is not an etcd snapshot`);
    expect((e as InputError).message).toContain(why);
  });

  it('refuses a snapshot whose hash does not match its contents (damaged)', async () => {
    const damaged = fakeSnapshot();
    damaged[5000] = 1;
    await expect(checkSnapshotFile(file('damaged.db', damaged), dir)).rejects.toThrow(/does not match its contents/);
  });

  it('refuses a directory and a missing file', async () => {
    mkdirSync(join(dir, 'adir'));
    await expect(checkSnapshotFile(join(dir, 'adir'), dir)).rejects.toThrow(/adir is not an etcd snapshot: not a regular file/);
    await expect(checkSnapshotFile(join(dir, 'missing.db'), dir)).rejects.toThrow(/cannot read missing.db: ENOENT/);
  });

  it('reads etcdctl snapshot status -w json, and nothing else', () => {
    expect(parseSnapshotStatus('{"hash":439041101,"revision":1234,"totalKey":567,"totalSize":16384}')).toEqual({ hash: 439041101, revision: 1234, totalKey: 567, totalSize: 16384 });
    expect(parseSnapshotStatus('Error: invalid database')).toBeUndefined();
    expect(parseSnapshotStatus('{"hash":1}')).toBeUndefined();
  });
});

describe('the restore plan', () => {
  const snapshot = { file: '/p/backups/s.db', sha256: 'ab'.repeat(32), size: 16416 };
  const commands = (plan: ReturnType<typeof restorePlan>, host: string) =>
    plan.phases.flatMap((p) => p.changes.get(host)!.map((c) => (c.kind === 'exec' ? c.cmd.text : `put ${c.path} ${c.mode.toString(8)}`)));

  it('on one member: copy, stop the control plane, then etcd, restore with its names, swap the data dir, start, clean up', () => {
    const inv = inventoryOf(MACHINES);
    const plan = restorePlan(inv, snapshot, '20261201T120000Z');
    expect(plan.members.map((m) => m.hostname)).toEqual(['server']);
    expect(plan.phases.map((p) => p.kind)).toEqual(['prepare', 'stop', 'stop', 'restore', 'start', 'start', 'cleanup']);
    const staged = `${STAGING_DIR}/snapshot-20261201T120000Z.db`;
    expect(plan.staged).toBe(staged);
    const cmds = commands(plan, 'server');
    expect(cmds).toEqual([
      `install -d -m 0700 ${STAGING_DIR} && chmod 0700 ${STAGING_DIR}`,
      `put ${staged} 600`,
      `echo '${'ab'.repeat(32)}  ${staged}' | sha256sum --check --status`,
      'systemctl stop kube-apiserver kube-controller-manager kube-scheduler',
      'systemctl stop etcd',
      `ETCDCTL_API=3 /usr/local/bin/etcdctl snapshot restore ${staged} --name=server --initial-cluster=server=https://10.240.0.10:2380 ` +
        `--initial-cluster-token=etcd-server.kubernetes.local --initial-advertise-peer-urls=https://10.240.0.10:2380 --data-dir=/var/lib/etcd.restore-20261201T120000Z`,
      'mv -T /var/lib/etcd /var/lib/etcd.before-restore-20261201T120000Z && mv -T /var/lib/etcd.restore-20261201T120000Z /var/lib/etcd && ' +
        'chown -R --reference=/var/lib/etcd.before-restore-20261201T120000Z /var/lib/etcd && chmod 0700 /var/lib/etcd',
      'systemctl start --no-block etcd',
      expect.stringContaining('etcdctl --endpoints=https://127.0.0.1:2379'),
      'systemctl start kube-apiserver kube-controller-manager kube-scheduler',
      expect.stringContaining('get --raw=/readyz'),
      `rm -f ${staged} && rmdir --ignore-fail-on-non-empty ${STAGING_DIR}`,
    ]);
    expect(plan.keptDataDirs).toEqual(new Map([['server', '/var/lib/etcd.before-restore-20261201T120000Z']]));
    // The snapshot is marked secret: its contents never reach a plan, a diff or a log.
    expect(plan.phases[0]!.changes.get('server')!.find((c) => c.kind === 'put')).toMatchObject({ secret: true, mode: 0o600 });
  });

  it('on three members: each restored with its own name and peer URL, all with the initial cluster and token of the etcd unit; workers untouched', () => {
    const inv = inventoryOf(THREE);
    const plan = restorePlan(inv, snapshot, '20261201T120000Z');
    expect(plan.members.map((m) => m.hostname)).toEqual(['server-0', 'server-1', 'server-2']);
    for (const p of plan.phases) expect([...p.changes.keys()]).toEqual(['server-0', 'server-1', 'server-2']);
    const cluster = 'server-0=https://10.240.0.10:2380,server-1=https://10.240.0.11:2380,server-2=https://10.240.0.12:2380';
    expect(etcdInitialCluster(inv)).toBe(cluster);
    expect(etcdClusterToken(inv)).toBe('etcd-server-0.kubernetes.local');
    inv.controlPlanes.forEach((m) => {
      const restore = commands(plan, m.hostname).find((c) => c.includes('snapshot restore'))!;
      expect(restore).toContain(`--name=${m.hostname} --initial-cluster=${cluster} --initial-cluster-token=etcd-server-0.kubernetes.local --initial-advertise-peer-urls=https://${m.ip}:2380 `);
    });
    // etcd starts without blocking on every member: a member of several waits for the others' votes.
    expect(commands(plan, 'server-2')).toContain('systemctl start --no-block etcd');
  });

  it('renders the same initial cluster and token as the etcd unit', async () => {
    const { renderMachine } = await import('../../src/render/machine.ts');
    const inv = inventoryOf(THREE);
    const files = renderMachine(inv, inv.controlPlanes[1]!);
    const unit = files.find((f) => f.path === '/etc/systemd/system/etcd.service')!.content.toString();
    expect(unit).toContain(`--initial-cluster=${etcdInitialCluster(inv)}`);
    expect(unit).toContain(`--initial-cluster-token=${etcdClusterToken(inv)}`);
    expect(unit).toContain('--initial-advertise-peer-urls=https://10.240.0.11:2380');
  });
});

/** A fake control-plane machine that answers every command of the restore, or fails the one matching `failOn`. */
function member(name: string, failOn?: RegExp): FakeTransport {
  const t = new FakeTransport(name);
  if (failOn) t.handlers.push([failOn, () => ({ code: 1, stdout: '', stderr: `${name}: simulated failure` })]);
  t.handlers.push([/./, () => ({ code: 0, stdout: '', stderr: '' })]);
  return t;
}

describe('the restore run', () => {
  const project = () => {
    const dir = tmp();
    writeFileSync(join(dir, 's.db'), fakeSnapshot());
    return { dir, file: join(dir, 's.db') };
  };
  const run = (inv: ReturnType<typeof inventoryOf>, file: string, machines: Map<string, FakeTransport>, extra: { dryRun?: boolean; status?: () => Promise<SnapshotStatus> } = {}) => {
    const o = sink();
    const done = restoreSnapshot({
      inventory: inv, file, cwd: inv.dir, dryRun: extra.dryRun ?? false, confirmed: true, out: o.out, now: new Date('2026-12-01T12:00:00Z'),
      status: extra.status ?? (async () => STATUS),
      connect: async (m) => machines.get(m.hostname)!,
    });
    return { done, text: o.text };
  };

  it('runs every phase on all three members in order and says where the old data is', async () => {
    const p = project();
    const inv = inventoryOf(THREE, p.dir);
    const machines = new Map(inv.controlPlanes.map((m) => [m.hostname, member(m.hostname)]));
    const r = run(inv, p.file, machines);
    await r.done;
    for (const t of machines.values()) {
      const stop = t.commands.findIndex((c) => c.startsWith('systemctl stop kube-apiserver'));
      const stopEtcd = t.commands.indexOf('systemctl stop etcd');
      const restore = t.commands.findIndex((c) => c.includes('snapshot restore'));
      const start = t.commands.indexOf('systemctl start --no-block etcd');
      const startApi = t.commands.indexOf('systemctl start kube-apiserver kube-controller-manager kube-scheduler');
      expect([stop, stopEtcd, restore, start, startApi].every((i, k, a) => i >= 0 && (k === 0 || i > a[k - 1]!))).toBe(true);
      expect(t.uploads).toEqual([{ path: `${STAGING_DIR}/snapshot-20261201T120000Z.db`, mode: 0o600, owner: 'root:root', size: fakeSnapshot().length }]);
      expect(t.closed).toBe(true);
    }
    expect(r.text()).toContain('s.db: an etcd snapshot: revision 1234, 567 keys, 16384 bytes, hash 1a2b3c4d');
    expect(r.text()).toContain('server-1: the data directory from before the restore is kept at /var/lib/etcd.before-restore-20261201T120000Z');
    expect(r.text()).not.toContain(fakeSnapshot().subarray(16, 20).toString('latin1'));
  });

  it('--dry-run prints every command per member and touches no machine', async () => {
    const p = project();
    const inv = inventoryOf(THREE, p.dir);
    const dry = run(inv, p.file, new Map(), { dryRun: true });
    await dry.done;
    expect(dry.text()).toContain('Would restore it on 3 control-plane machine(s): server-0, server-1, server-2. Nothing was changed.');
    expect(dry.text()).toContain('server-2: run: ETCDCTL_API=3 /usr/local/bin/etcdctl snapshot restore');
    expect(dry.text()).toContain(`server-0: put ${STAGING_DIR}/snapshot-20261201T120000Z.db 0600 root:root (secret)`);
  });

  it('a failed restore on one member stops before anything starts, removes the copies and says what is stopped and where the old data is', async () => {
    const p = project();
    const inv = inventoryOf(THREE, p.dir);
    const machines = new Map(inv.controlPlanes.map((m) => [m.hostname, member(m.hostname, m.hostname === 'server-1' ? /snapshot restore/ : undefined)]));
    const e = await run(inv, p.file, machines).done.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FailureError);
    expect((e as FailureError).message).toContain('restore each member from the snapshot');
    expect((e as FailureError).message).toContain('server-1: command failed (exit 1)');
    expect((e as FailureError).message).toContain('server-1: simulated failure');
    expect((e as FailureError).hint).toContain('etcd and the API servers are stopped');
    expect((e as FailureError).hint).toContain('/var/lib/etcd.before-restore-20261201T120000Z');
    for (const t of machines.values()) {
      expect(t.commands).not.toContain('systemctl start --no-block etcd');
      expect(t.commands.at(-1)).toMatch(/^rm -f \/var\/lib\/hardway\/etcd-restore\/snapshot-/);
    }
  });

  it('a member that does not answer stops the restore before any machine changes', async () => {
    const p = project();
    const inv = inventoryOf(THREE, p.dir);
    const machines = new Map(inv.controlPlanes.map((m) => [m.hostname, member(m.hostname)]));
    const o = sink();
    const e = await restoreSnapshot({
      inventory: inv, file: p.file, cwd: inv.dir, dryRun: false, confirmed: true, out: o.out, now: new Date(), status: async () => STATUS,
      connect: async (m) => {
        if (m.hostname === 'server-2') throw new Error('server-2 (10.240.0.12): connection refused');
        return machines.get(m.hostname)!;
      },
    }).catch((x: unknown) => x);
    expect((e as FailureError).message).toContain('cannot reach every control-plane machine, so nothing was changed');
    expect((e as FailureError).message).toContain('server-2 (10.240.0.12): connection refused');
    for (const t of machines.values()) expect(t.commands).toEqual([]);
  });

  it('a file that is not a snapshot changes nothing and is an input error', async () => {
    const p = project();
    writeFileSync(p.file, 'not a snapshot\n'.repeat(600));
    const inv = inventoryOf(THREE, p.dir);
    const machines = new Map(inv.controlPlanes.map((m) => [m.hostname, member(m.hostname)]));
    await expect(run(inv, p.file, machines).done).rejects.toBeInstanceOf(InputError);
    for (const t of machines.values()) expect(t.commands).toEqual([]);
  });
});

describe('etcd snapshot save', () => {
  /** A project with downloads/client/etcdctl and pki/'s etcd client files (their contents do not matter here). */
  const project = () => {
    const dir = tmp();
    writeFileSync(join(dir, 'machines.txt'), THREE);
    mkdirSync(join(dir, 'downloads/client'), { recursive: true });
    writeFileSync(join(dir, 'downloads/client/etcdctl'), '#!/bin/sh\nexit 1\n');
    chmodSync(join(dir, 'downloads/client/etcdctl'), 0o755);
    mkdirSync(join(dir, 'pki'));
    for (const f of ['etcd-ca.crt', 'etcd-client.crt', 'etcd-client.key']) writeFileSync(join(dir, 'pki', f), 'x');
    return dir;
  };
  /** Stands in for the jumpbox's etcdctl: members in `down` refuse; a save writes a snapshot to its last argument. */
  const etcdctl = (down: string[], seen: string[]) => async (cmd: Command) => {
    seen.push(cmd.text);
    const endpoint = /--endpoints=(\S+)/.exec(cmd.text)?.[1];
    if (cmd.text.includes('snapshot save')) {
      if (down.some((ip) => endpoint === `https://${ip}:2379`)) return { code: 1, stdout: '', stderr: '{"level":"warn"}\nError: context deadline exceeded' };
      const out = cmd.text.split(' ').at(-1)!;
      expect(cmd.text.startsWith('umask 077 && ')).toBe(true);
      writeFileSync(out, fakeSnapshot(), { mode: 0o600 });
      return { code: 0, stdout: `Snapshot saved at ${out}\n`, stderr: '' };
    }
    return { code: 0, stdout: JSON.stringify(STATUS), stderr: '' };
  };

  it('saves a verified snapshot under backups/ (0700, git-ignored), mode 0600, from the first member that answers', async () => {
    const dir = project();
    const inv = inventoryOf(THREE, dir);
    const seen: string[] = [];
    const o = sink();
    const { file, status } = await saveSnapshot({ inventory: inv, cwd: dir, out: o.out, now: new Date('2026-12-01T19:55:02.123Z'), run: etcdctl(['10.240.0.10'], seen) });
    expect(file).toBe(join(dir, 'backups/etcd-snapshot-20261201T195502Z.db'));
    expect(status).toEqual(STATUS);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'backups')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, 'backups/.gitignore'), 'utf8')).toContain('\n*\n');
    expect(readdirSync(join(dir, 'backups')).sort()).toEqual(['.gitignore', 'etcd-snapshot-20261201T195502Z.db']);
    expect(seen.filter((c) => c.includes('snapshot save')).map((c) => /--endpoints=(\S+)/.exec(c)![1])).toEqual(['https://10.240.0.10:2379', 'https://10.240.0.11:2379']);
    expect(seen.at(-1)).toMatch(/snapshot status \S+ -w json$/);
    expect(seen.every((c) => c.includes(`--cert=${join(dir, 'pki/etcd-client.crt')}`) || c.includes('snapshot status'))).toBe(true);
    expect(o.text()).toBe('Saved backups/etcd-snapshot-20261201T195502Z.db (mode 0600) from server-1 (https://10.240.0.11:2379): revision 1234, 567 keys, 16384 bytes, hash 1a2b3c4d\n');
  });

  it('fails naming every member and its error when none answers, and leaves no file', async () => {
    const dir = project();
    const inv = inventoryOf(THREE, dir);
    const e = await saveSnapshot({ inventory: inv, file: join(dir, 'x.db'), cwd: dir, out: sink().out, now: new Date(), run: etcdctl(['10.240.0.10', '10.240.0.11', '10.240.0.12'], []) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FailureError);
    expect((e as FailureError).message).toContain('no etcd member sent a snapshot');
    for (const h of ['server-0', 'server-1', 'server-2']) expect((e as FailureError).message).toContain(`${h}: command failed (exit 1)`);
    expect((e as FailureError).message).toContain('Error: context deadline exceeded');
    expect(readdirSync(dir).filter((f) => f.endsWith('.db') || f.endsWith('.tmp') || f.endsWith('.part'))).toEqual([]);
  });

  it('refuses to overwrite a file, a missing directory and --node that is not a control plane, before etcdctl runs', async () => {
    const dir = project();
    const inv = inventoryOf(THREE, dir);
    const seen: string[] = [];
    writeFileSync(join(dir, 'old.db'), 'precious');
    const save = (extra: { file?: string; node?: string }) => saveSnapshot({ inventory: inv, cwd: dir, out: sink().out, now: new Date(), run: etcdctl([], seen), ...extra });
    await expect(save({ file: join(dir, 'old.db') })).rejects.toThrow(/old.db already exists/);
    await expect(save({ file: join(dir, 'no/such/dir/x.db') })).rejects.toThrow(/no such directory/);
    await expect(save({ node: 'node-0' })).rejects.toThrow(/--node "node-0" is not a control-plane machine/);
    expect(seen).toEqual([]);
    expect(readFileSync(join(dir, 'old.db'), 'utf8')).toBe('precious');
    expect(existsSync(join(dir, 'backups'))).toBe(false);
  });
});

describe('the commands through main()', () => {
  const project = () => {
    const dir = tmp();
    writeFileSync(join(dir, 'machines.txt'), MACHINES);
    return dir;
  };

  it('restore needs exactly one FILE (exit 2)', async () => {
    const dir = project();
    const none = await runCli(['etcd', 'snapshot', 'restore'], dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('hardway etcd snapshot restore needs the snapshot FILE');
    const two = await runCli(['etcd', 'snapshot', 'restore', 'a.db', 'b.db'], dir);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('takes one FILE, got also "b.db"');
  });

  it('restore of a file that is not a snapshot exits 2 with the file named, no stack trace, nothing changed', async () => {
    const dir = project();
    writeFileSync(join(dir, 'notes.db'), 'hello');
    const r = await runCli(['etcd', 'snapshot', 'restore', 'notes.db'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: notes.db is not an etcd snapshot: 5 bytes is too small for a database\n  hint: give a file saved by "hardway etcd snapshot save" (or etcdctl snapshot save)\n');
    expect(readdirSync(dir).sort()).toEqual(['machines.txt', 'notes.db']);
  });

  it('save takes at most one FILE and an unknown option is a usage error (exit 2)', async () => {
    const dir = project();
    const two = await runCli(['etcd', 'snapshot', 'save', 'a.db', 'b.db'], dir);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('takes one FILE');
    const bad = await runCli(['etcd', 'snapshot', 'save', '--force'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown option --force for "hardway etcd snapshot save"');
  });

  it('save without downloads/client/etcdctl says to run hardway download (exit 2: the project lacks it), and writes no file', async () => {
    const dir = project();
    const r = await runCli(['etcd', 'snapshot', 'save'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('client/etcdctl');
    expect(r.stderr).toContain('hardway download');
    expect(existsSync(join(dir, 'backups'))).toBe(false);
  });

  it('both appear in the help', async () => {
    const r = await runCli(['--help'], project());
    expect(r.stdout).toContain('etcd snapshot save');
    expect(r.stdout).toContain('etcd snapshot restore');
    const h = await runCli(['etcd', 'snapshot', 'restore', '--help'], project());
    expect(h.stdout).toContain('--dry-run');
  });
});

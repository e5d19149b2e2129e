// `hardway etcd snapshot list|fetch`: the scheduled snapshots on the first control plane, read
// through the probe registry (name, time, size, revision; newest first), and fetch's copy to
// backups/ (0600 under 0700), checked like a saved snapshot before it gets its name; a name that
// is not there, or a copy that fails its check, leaves nothing behind.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fetchScheduled, listScheduled } from '../../src/etcd-snapshot/scheduled.ts';
import { FailureError, InputError } from '../../src/errors.ts';
import { parseScheduledSnapshots, scheduledSnapshots } from '../../src/probes/system.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import { inventoryOf } from './engine.helpers.ts';

function fakeSnapshot(): Buffer {
  const db = Buffer.alloc(4096 * 4);
  db.writeUInt32LE(0xed0cdaed, 16);
  db.writeUInt32LE(2, 20);
  return Buffer.concat([db, createHash('sha256').update(db).digest()]);
}

const LISTED = 'etcd-snapshot-20261206T220100Z.db 16416 812\netcd-snapshot-20261206T220200Z.db 16416 845\n';

/** The first control plane, with two scheduled snapshots (one of them readable as `content`). */
function holder(content: Buffer) {
  const t = new FakeTransport('server');
  t.answer(scheduledSnapshots, (dir, _etcdctl) => ({ code: 0, stdout: dir === '/var/backups/etcd-snapshots' ? LISTED : '' }));
  t.handlers.push(
    [/^base64 -w 0 \/var\/backups\/etcd-snapshots\/(\S+)$/, () => ({ code: 0, stdout: content.toString('base64'), stderr: '' })],
  );
  return t;
}

const sink = () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d) => (text += String(d)));
  return { out, text: () => text };
};

describe('scheduled snapshots: list', () => {
  it('parses name, time, size and revision, newest first; a line of anything else is left out', () => {
    const list = parseScheduledSnapshots(`${LISTED}etcd-snapshot-20261206T220300Z.db 16416 -\nnot-a-snapshot 1 2\n`);
    expect(list.map((s) => [s.name, s.time.toISOString(), s.size, s.revision])).toEqual([
      ['etcd-snapshot-20261206T220300Z.db', '2026-12-06T22:03:00.000Z', 16416, undefined],
      ['etcd-snapshot-20261206T220200Z.db', '2026-12-06T22:02:00.000Z', 16416, 845],
      ['etcd-snapshot-20261206T220100Z.db', '2026-12-06T22:01:00.000Z', 16416, 812],
    ]);
  });

  it('prints time, size and revision of each, read in one facts batch of the first control plane', async () => {
    const inv = inventoryOf();
    const t = holder(fakeSnapshot());
    const s = sink();
    await listScheduled({ inventory: inv, cwd: inv.dir, out: s.out, connect: async () => t });
    expect(s.text()).toBe('2 scheduled snapshot(s) on server in /var/backups/etcd-snapshots (etcd.snapshots is not set in cluster.yaml: none are taken), newest first:\n' +
      '2026-12-06T22:02:00Z       16416 bytes  revision 845  etcd-snapshot-20261206T220200Z.db\n' +
      '2026-12-06T22:01:00Z       16416 bytes  revision 812  etcd-snapshot-20261206T220100Z.db\n');
    expect(t.factBatches).toBe(1);
    expect(t.closed).toBe(true);
  });
});

describe('scheduled snapshots: fetch', () => {
  const status = async () => ({ hash: 1, revision: 845, totalKey: 9, totalSize: 16384 });

  it('copies the newest to backups/NAME, 0600 under 0700, checked before it gets its name', async () => {
    const inv = inventoryOf();
    const snap = fakeSnapshot();
    const s = sink();
    const { file } = await fetchScheduled({ inventory: inv, cwd: inv.dir, out: s.out, now: new Date(), status, connect: async () => holder(snap) });
    expect(file).toBe(join(inv.dir, 'backups', 'etcd-snapshot-20261206T220200Z.db'));
    expect(readFileSync(file).equals(snap)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(inv.dir, 'backups')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(inv.dir, 'backups')).sort()).toEqual(['.gitignore', 'etcd-snapshot-20261206T220200Z.db']);
    expect(s.text()).toBe('Fetched etcd-snapshot-20261206T220200Z.db from server to backups/etcd-snapshot-20261206T220200Z.db (mode 0600): revision 845, 9 keys, 16384 bytes, hash 00000001\n');
    // Never overwritten: the same one again is refused.
    await expect(fetchScheduled({ inventory: inv, cwd: inv.dir, out: s.out, now: new Date(), status, connect: async () => holder(snap) })).rejects.toThrow(/already exists/);
  });

  it('refuses a name that is not there (naming those that are) or not a snapshot name, and a copy that fails its check, leaving nothing', async () => {
    const inv = inventoryOf();
    const run = (name: string | undefined, content = fakeSnapshot()) => fetchScheduled({ inventory: inv, cwd: inv.dir, out: sink().out, now: new Date(), status, connect: async () => holder(content), ...(name ? { name } : {}) });
    const missing = await run('etcd-snapshot-20261206T230000Z.db').catch((e: unknown) => e as InputError);
    expect(missing).toBeInstanceOf(InputError);
    expect((missing as InputError).hint).toContain('etcd-snapshot-20261206T220200Z.db, etcd-snapshot-20261206T220100Z.db');
    await expect(run('../../etc/shadow')).rejects.toThrow(/is not the name of a scheduled snapshot/);
    const cut = fakeSnapshot().subarray(0, 8192);
    await expect(run('etcd-snapshot-20261206T220100Z.db', cut)).rejects.toBeInstanceOf(FailureError);
    expect(readdirSync(join(inv.dir, 'backups')).filter((f) => f !== '.gitignore')).toEqual([]);
  });
});

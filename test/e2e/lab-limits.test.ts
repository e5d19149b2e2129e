// A large lab's limits, at a size that fits the suite: the host's fs.inotify.max_user_instances is
// lowered for this test to a little above what root uses right now, so a lab of 2 machines meets
// it; `lab up` must raise it (said aloud, recorded) before any machine boots, and the last `lab
// down` must put back the value it found. And a machine that cannot boot (its sshd refuses its
// config) is reported with the reason from its own journal, well before the 180 s boot timeout.
// The lowered value is put back in afterAll whatever happens (and in the host-settings record, so
// a lab that goes down after this test cannot put the lowered value back).
import { readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downLab, hardway, type RunResult } from './helpers/lab.ts';

const NAME = 'e2e-lim';
const SUBNET = '10.240.110.0/24';
const STATE = `/var/lib/hardway/labs/${NAME}`;
const KEY = 'fs.inotify.max_user_instances';
const PROC = '/proc/sys/fs/inotify/max_user_instances';
const RECORD = '/run/hardway-lab/host-settings.json';
/** What root may still open while the lowered value holds (a few seconds, until lab up raises it). */
const SPARE = 24;

const read = () => Number(readFileSync(PROC, 'utf8').trim());
const write = (v: number) => writeFileSync(PROC, `${v}\n`);

/** inotify instances held by root's processes now (the count the limit applies to). */
function inotifyInUse(): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!/^Uid:\s+0\s/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) continue;
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify') n++;
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // the process exited meanwhile
    }
  }
  return n;
}

type Record = { original: { [key: string]: string }; holders: string[] };
function readRecord(): Record | undefined {
  try {
    return JSON.parse(readFileSync(RECORD, 'utf8')) as Record;
  } catch {
    return undefined;
  }
}

let original = 0;
let lowered = 0;
let dir = '';
let up: RunResult;

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the lab-limits e2e suite needs root (it runs systemd-nspawn and sets a sysctl)');
  await downLab(NAME);
  dir = `/tmp/hardway-${NAME}-${process.pid}`;
  original = read();
  lowered = inotifyInUse() + SPARE;
  expect(lowered).toBeLessThan(128); // else no lab would meet it here
  write(lowered);
  up = await hardway(['lab', 'up', '--name', NAME, '--subnet', SUBNET, '--servers', '1', '--workers', '1', '--dir', dir]);
});

afterAll(async () => {
  try {
    await downLab(NAME);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    // Put back what this test lowered: the value, and the record when a lab holds it still.
    if (read() < original) write(original);
    const rec = readRecord();
    if (rec && rec.original[KEY] === String(lowered)) {
      rec.original[KEY] = String(original);
      writeFileSync(`${RECORD}.tmp`, JSON.stringify(rec, null, 2) + '\n');
      renameSync(`${RECORD}.tmp`, RECORD);
    }
  }
});

describe('a lab that meets a host limit', () => {
  it('raises fs.inotify.max_user_instances before booting, says so, records it, and every machine boots', () => {
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    const said = new RegExp(`^host setting ${KEY.replaceAll('.', '\\.')}: ${lowered} -> (\\d+) \\(inotify instances .* of (\\d+) lab machine\\(s\\) on this host; put back when the last lab goes down\\)$`, 'm').exec(up.stdout);
    expect(said, up.stdout).not.toBeNull();
    const [raisedTo, machines] = [Number(said![1]), Number(said![2])];
    expect(machines).toBeGreaterThanOrEqual(2); // ours, and any other lab's on this host
    expect(raisedTo).toBe(Math.max(128, 32 * machines));
    expect(read()).toBeGreaterThanOrEqual(raisedTo);
    expect(up.stdout).toMatch(/Boot server \(10\.240\.110\.10\): done/);
    expect(up.stdout).toMatch(/Boot node-0 \(10\.240\.110\.20\): done/);
    const rec = readRecord()!;
    expect(rec.holders).toContain(STATE);
    expect(Number(rec.original[KEY])).toBeLessThanOrEqual(Math.max(lowered, original));
  });

  it('a rerun of lab up changes nothing and says nothing about the host', async () => {
    const again = await hardway(['lab', 'up', '--name', NAME, '--subnet', SUBNET, '--servers', '1', '--workers', '1', '--dir', dir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already running, nothing to do/);
    expect(again.stdout).not.toMatch(/host setting/);
  });

  it('a machine whose sshd cannot start is reported with its journal\'s reason, from ssh.service\'s failure (not the boot timeout)', async () => {
    const stop = await hardway(['lab', 'stop', '--name', NAME, 'node-0']);
    expect(stop.code).toBe(0);
    const conf = join(STATE, 'machines/node-0/root/etc/ssh/sshd_config.d/broken.conf');
    writeFileSync(conf, 'NoSuchOption yes\n');
    const t0 = Date.now();
    const start = await hardway(['lab', 'start', '--name', NAME, 'node-0']);
    const seconds = (Date.now() - t0) / 1000;
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(/node-0 \(10\.240\.110\.20\): sshd did not start \(ssh\.service failed, result exit-code\); its journal says: /);
    expect(start.stderr).toMatch(/the machine's journal, errors of its last boot:\n[\s\S]*sshd\[\d+\]: \/etc\/ssh\/sshd_config\.d\/broken\.conf: line 1: Bad configuration option: NoSuchOption/);
    expect(start.stderr).toMatch(/systemd\[1\]: Failed to start ssh\.service/);
    expect(start.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // Found from the failed unit, not by waiting out the boot timeout (whose error says so instead).
    expect(start.stderr).not.toMatch(/no SSH answer within/);
    // Its time is printed, not asserted: speed is measured in benchmarks (167 s once at load 4, 4/4 well under 90 s otherwise).
    console.log(`sshd failure reported after ${seconds.toFixed(1)} s`);
    // Repaired, it boots again.
    await hardway(['lab', 'stop', '--name', NAME, 'node-0']);
    rmSync(conf);
    const again = await hardway(['lab', 'start', '--name', NAME, 'node-0']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
  });

  it('the last lab down puts back the value it found; with another lab up the value stays held', async () => {
    const others = readRecord()!.holders.filter((h) => h !== STATE);
    const down = await hardway(['lab', 'down', '--name', NAME, '--yes']);
    expect(down.code).toBe(0);
    const rec = readRecord();
    if (others.length === 0 && rec === undefined) {
      expect(down.stdout).toMatch(new RegExp(`host setting ${KEY.replaceAll('.', '\\.')}: \\d+ -> ${lowered} \\(put back: no lab left on this host\\)`));
      expect(read()).toBe(lowered);
    } else {
      // Another lab (another suite's, a developer's) holds the settings: nothing is put back yet.
      expect(rec!.holders).not.toContain(STATE);
      expect(down.stdout).not.toMatch(/host setting/);
      expect(read()).toBeGreaterThanOrEqual(128);
    }
  });
});

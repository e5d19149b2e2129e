// worker-os still finds every swap drift its probes found before they became shell builtins: swap
// in use (/proc/swaps, was swapon), a swap line in /etc/fstab (a read loop, was grep -Ec) and
// swap.target unmasked (in the one `systemctl show`, was `systemctl is-enabled`). The swap probes'
// real commands run under dash against temp copies of the two files.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyChange, describeChange } from '../../src/engine/apply.ts';
import type { Inventory } from '../../src/inventory.ts';
import { workerOsStep } from '../../src/steps/worker-os.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import type { Command } from '../../src/shell.ts';
import { fstabSwapCountCommand, fstabSwapLines, swapDevices, swapNamesCommand } from '../../src/probes/system.ts';
import { planOn, project } from './step-plans.helpers.ts';

const HEADER = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';

describe('worker-os: swap drift found by the builtin probes', () => {
  let inv: Inventory;
  const dir = mkdtempSync(join(tmpdir(), 'hw-worker-os-swap-'));
  const swaps = join(dir, 'swaps');
  const fstab = join(dir, 'fstab');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeAll(async () => {
    inv = await project();
  });

  /** A converged worker whose swap probes run for real under dash, on the temp files. */
  async function converged() {
    const t = debianMachine('node-0');
    const real = (cmd: Command) => {
      const r = spawnSync('/bin/dash', ['-c', cmd.text], { env: { PATH: '/nonexistent' }, encoding: 'utf8' });
      return { code: r.status ?? 1, stdout: r.stdout };
    };
    t.answer(swapDevices, () => real(swapNamesCommand(swaps))).answer(fstabSwapLines, () => real(fstabSwapCountCommand(fstab)));
    t.handlers.unshift([/^swapoff -a$/, () => (writeFileSync(swaps, HEADER), { code: 0, stdout: '', stderr: '' })]);
    t.handlers.unshift([/^sed -i -E (.+) \/etc\/fstab$/, (m) => {
      const r = spawnSync('/bin/dash', ['-c', `sed -i -E ${m[1]} ${fstab}`], { encoding: 'utf8' });
      return { code: r.status ?? 1, stdout: '', stderr: r.stderr };
    }]);
    writeFileSync(swaps, HEADER);
    writeFileSync(fstab, 'UUID=1 / ext4 errors=remount-ro 0 1\n');
    const machine = inv.machines.find((m) => m.hostname === 'node-0')!;
    for (const c of await planOn(workerOsStep, inv, machine, t)) await applyChange(t, c);
    expect(await planOn(workerOsStep, inv, machine, t)).toEqual([]);
    return { t, plan: async () => (await planOn(workerOsStep, inv, machine, t)).map(describeChange) };
  }

  it('swap in use: swapoff, and nothing after', async () => {
    const { t, plan } = await converged();
    writeFileSync(swaps, `${HEADER}/dev/vda3                               partition\t1048572\t\t0\t\t-2\n`);
    const lines = await plan();
    expect(lines).toEqual(['run: swapoff -a (swap is on (/dev/vda3))']);
    await applyChange(t, (await planOn(workerOsStep, inv, inv.machines.find((m) => m.hostname === 'node-0')!, t))[0]!);
    expect(await plan()).toEqual([]);
  });

  it('a swap line in /etc/fstab: commented out, and nothing after', async () => {
    const { t, plan } = await converged();
    writeFileSync(fstab, 'UUID=1 / ext4 errors=remount-ro 0 1\nUUID=2 none swap sw 0 0\n');
    const lines = await plan();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^run: sed -i -E .* \/etc\/fstab \(swap listed in \/etc\/fstab would come back at boot\)$/);
    for (const c of await planOn(workerOsStep, inv, inv.machines.find((m) => m.hostname === 'node-0')!, t)) await applyChange(t, c);
    expect(await plan()).toEqual([]);
  });

  it('swap.target unmasked: masked again, read in the one systemctl show (no systemctl is-enabled)', async () => {
    const { t, plan } = await converged();
    t.state.swapMasked = false;
    expect(await plan()).toEqual([expect.stringMatching(/^run: systemctl mask swap\.target/)]);
    expect(t.commands.filter((c) => c.includes('is-enabled'))).toEqual([]);
    expect(t.commands.filter((c) => c.startsWith('facts: probe systemctl show')).at(-1)).toContain(' swap.target;');
  });
});

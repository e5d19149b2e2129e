// remove-node: which machine it removes (a line of machines.txt, or the certificate hardway issued
// for a worker whose line is gone), what stays in the inventory, and drain-node's plan through the API.
import { beforeAll, describe, expect, it } from 'vitest';
import { removalOf, removalScope } from '../../src/removal.ts';
import { describeChange } from '../../src/engine/apply.ts';
import { parseInventory, type Inventory } from '../../src/inventory.ts';
import { drainNodeStep } from '../../src/steps/drain-node.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { nodeListed } from '../../src/probes/kubectl.ts';
import { planOn, project } from './step-plans.helpers.ts';

describe('remove-node finds the machine', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });
  const without = (name: string) => parseInventory(inv.machines.filter((m) => m.hostname !== name).map((m) => `${m.ip} ${m.fqdn} ${m.hostname} ${m.podSubnet ?? ''}`).join('\n'), inv.settings, { file: inv.machinesFile, dir: inv.dir, clusterFile: inv.clusterFile });

  it('in machines.txt: that line, and the others stay', () => {
    const r = removalOf(inv, 'node-1');
    expect([r.machine.ip, r.machine.role, r.from.endsWith('machines.txt:3')]).toEqual(['10.240.0.21', 'worker', true]);
    expect([r.others.machines.map((m) => m.hostname), r.others.workers.map((m) => m.hostname)]).toEqual([['server', 'node-0'], ['node-0']]);
  });

  it('once its line is gone: its address and names from its kubelet certificate', () => {
    const r = removalOf(without('node-1'), 'node-1');
    expect([r.machine.hostname, r.machine.fqdn, r.machine.ip, r.machine.role, r.from]).toEqual(['node-1', 'node-1.kubernetes.local', '10.240.0.21', 'worker', 'pki/machines/node-1/kubelet.crt']);
    expect(r.others.workers.map((m) => m.hostname)).toEqual(['node-0']);
  });

  it('refuses a control-plane machine and a name with no line and no record (exit 2)', () => {
    expect(() => removalOf(inv, 'server')).toThrow(expect.objectContaining({ exitCode: 2, message: 'server is a control-plane machine; remove-node removes workers' }));
    expect(() => removalOf(inv, 'node-9')).toThrow(expect.objectContaining({ exitCode: 2, message: 'no worker named "node-9" in machines.txt, and no record of one: pki/machines/node-9/kubelet.crt does not exist' }));
    expect(() => removalOf(inv, '../x')).toThrow(expect.objectContaining({ exitCode: 2 }));
  });
});

describe('drain-node plans through the API on the first control-plane machine', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });
  const on = (answer: { code: number; stdout: string; stderr: string }) => {
    const t = debianMachine('server');
    t.answer(nodeListed, (name) => (name === 'node-1' ? answer : { code: 0, stdout: '' }));
    return t;
  };
  const step = drainNodeStep;
  const leaving = () => removalScope(inv, ['node-1']).inventory;

  it('targets the first control-plane machine, and only when a machine leaves', () => {
    expect(step.targets(leaving(), {} as never).map((m) => m.hostname)).toEqual(['server']);
    expect(step.targets(inv, {} as never)).toEqual([]);
  });
  it('cordons, drains and deletes a Node that exists', async () => {
    const plan = (await planOn(step, leaving(), inv.machines[0]!, on({ code: 0, stdout: 'node/node-1\n', stderr: '' }))).map(describeChange);
    expect(plan).toHaveLength(1);
    expect(plan[0]).toMatch(/^run: kubectl .* cordon node-1 && kubectl .* drain node-1 --ignore-daemonsets --delete-emptydir-data --force --timeout=180s --skip-wait-for-delete-timeout=60 && kubectl .* delete node node-1 \(node node-1 is in the cluster/);
  });
  it('plans nothing once the Node is gone', async () => {
    expect(await planOn(step, leaving(), inv.machines[0]!, on({ code: 0, stdout: '', stderr: '' }))).toEqual([]);
  });
  it('fails naming the machine and kubectl\'s error when the API does not answer', async () => {
    await expect(planOn(step, leaving(), inv.machines[0]!, on({ code: 1, stdout: 'The connection to the server was refused', stderr: '' })))
      .rejects.toThrow('server: cannot ask the API for node node-1 (exit 1): The connection to the server was refused');
  });
});

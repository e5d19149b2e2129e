// doctor --bundle reads over the connections doctor opened: one per machine for the whole run.
import { describe, expect, it } from 'vitest';
import { sharedConnections } from '../../src/doctor/shared-connections.ts';
import { sh } from '../../src/shell.ts';
import type { Connect } from '../../src/transport/index.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import type { Machine } from '../../src/inventory.ts';

describe("doctor's shared connections", () => {
  it('every reader of a machine gets its one connection; closing it is left to the end of the run', async () => {
    const opened: string[] = [];
    const fakes = new Map<string, FakeTransport>();
    const connect: Connect = async (host) => {
      opened.push(host.name);
      if (host.name === 'down') throw new Error('connect ECONNREFUSED');
      const t = new FakeTransport(host.name);
      t.handlers.push([/^hostname$/, () => ({ code: 0, stdout: `${host.name}\n`, stderr: '' })]);
      fakes.set(host.name, t);
      return t;
    };
    const shared = sharedConnections(connect);
    const node0 = { name: 'node-0', machine: { hostname: 'node-0' } as Machine };
    // doctor's gathering, then the bundle's read, each closing what it was given.
    const first = await shared.connect(node0);
    expect((await first.exec(sh`hostname`)).stdout).toBe('node-0\n');
    await first.close();
    const second = await shared.connect(node0);
    expect((await second.exec(sh`hostname`)).stdout).toBe('node-0\n');
    await second.close();
    expect(fakes.get('node-0')!.closed).toBe(false);
    // A machine that did not answer doctor is not tried again for the bundle.
    const down = { name: 'down', machine: { hostname: 'down' } as Machine };
    await expect(shared.connect(down)).rejects.toThrow('ECONNREFUSED');
    await expect(shared.connect(down)).rejects.toThrow('ECONNREFUSED');
    expect(opened).toEqual(['node-0', 'down']);
    await shared.closeAll();
    expect(fakes.get('node-0')!.closed).toBe(true);
  });
});

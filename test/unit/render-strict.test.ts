// Strict rendering: a value a template asks for but does not get is an error naming the template
// and the field, never an empty string in a config file.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { FailureError } from '../../src/errors.ts';
import { parseInventory } from '../../src/inventory.ts';
import { renderMachine } from '../../src/render/machine.ts';
import { compileTemplate, createTemplateSet, PACKAGE_ROOT } from '../../src/render/templates.ts';

const inv = parseInventory(
  '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n',
  defaultSettings(),
  { file: 'machines.txt', dir: '/x', clusterFile: '/x/cluster.yaml' },
);
const scratch = mkdtempSync(join(tmpdir(), 'hardway-render-strict-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function caught(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

describe('strict templates', () => {
  it('a missing top-level field is a FailureError naming the template, the field and the line', () => {
    const render = compileTemplate('templates/example.yaml.hbs', 'a: 1\nb: "{{foo}}"\n');
    const e = caught(() => render({ bar: 1 }));
    expect(e).toBeInstanceOf(FailureError);
    expect(e.message).toBe('templates/example.yaml.hbs: missing value "foo" (line 2)');
  });

  it('a missing nested field is named by its whole path', () => {
    const render = compileTemplate('units/x.service.hbs', 'ExecStart=/bin/x --dir={{WORKER.notThere}}\n');
    expect(caught(() => render({ WORKER: {} })).message).toBe('units/x.service.hbs: missing value "WORKER.notThere" (line 1)');
  });

  it('a missing field inside #each is an error too', () => {
    const render = compileTemplate('units/r.service.hbs', '{{#each routes}}\nExecStart=ip route replace {{subnet}} via {{gateway}}\n{{/each}}\n');
    expect(caught(() => render({ routes: [{ subnet: '10.200.0.0/24', via: '10.240.0.20' }] })).message)
      .toBe('units/r.service.hbs: missing value "gateway" (line 2)');
  });

  it('nothing is HTML-escaped', () => {
    expect(compileTemplate('t', '{{v}}')({ v: `<a href="x">&'</a>` })).toBe(`<a href="x">&'</a>`);
  });

  it('a template syntax error names the template', () => {
    const e = caught(() => compileTemplate('templates/broken.hbs', '{{#each x}}no end\n')({ x: [] }));
    expect(e).toBeInstanceOf(FailureError);
    expect(e.message).toMatch(/^templates\/broken\.hbs: cannot render: /);
  });

  it('renderMachine fails naming the shipped template when it asks for a value rendering does not give', () => {
    const root = join(scratch, 'pkg');
    cpSync(join(PACKAGE_ROOT, 'templates'), join(root, 'templates'), { recursive: true });
    cpSync(join(PACKAGE_ROOT, 'units'), join(root, 'units'), { recursive: true });
    writeFileSync(join(root, 'templates/kubelet-config.yaml.hbs'), 'podCIDR: "{{machine.podSubnet}}"\nmaxPods: {{settings.maxPods}}\n');
    const node0 = inv.machines[1]!;
    const e = caught(() => renderMachine(inv, node0, { templateRoot: root }));
    expect(e).toBeInstanceOf(FailureError);
    expect(e.message).toBe('templates/kubelet-config.yaml.hbs: missing value "settings.maxPods" (line 2)');
    // The copy of the shipped templates renders fine, so the failure above is the missing field alone.
    expect(renderMachine(inv, inv.machines[0]!, { templateRoot: root }).length).toBeGreaterThan(0);
  });

  it('a missing template file is a FailureError naming it', () => {
    const e = caught(() => createTemplateSet(scratch).render('units/nope.service.hbs', {}));
    expect(e).toBeInstanceOf(FailureError);
    expect(e.message).toMatch(/^units\/nope\.service\.hbs: template not readable/);
  });

  it('templates are found from the package root, not the working directory', () => {
    const cwd = process.cwd();
    process.chdir(scratch);
    try {
      expect(renderMachine(inv, inv.machines[0]!).some((f) => f.path.endsWith('etcd.service'))).toBe(true);
    } finally {
      process.chdir(cwd);
    }
  });
});

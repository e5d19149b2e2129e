// One API address: what `hardway inventory` shows (text and --json) is what pki/jumpbox.kubeconfig
// dials, with one control plane and with three (then the name pinned to every one of them).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kubeconfigsFor } from '../../src/certs/kubeconfig.ts';
import { loadInventory } from '../../src/inventory.ts';
import { runCli } from '../helpers/cli.ts';

const ROOT = join(import.meta.dirname, '../..');

describe('the API address inventory shows', () => {
  it.each([
    ['examples/machines.txt', 'https://server.kubernetes.local:6443'],
    ['test/fixtures/ha/machines.txt', 'https://api.kubernetes.local:6443'],
  ])('%s: the text, the JSON and the jumpbox kubeconfig name %s', async (file, url) => {
    const machines = join(ROOT, file);
    const jumpbox = kubeconfigsFor(loadInventory(machines)).find((k) => k.name === 'jumpbox')!;
    expect(jumpbox.server).toBe(url);
    const text = await runCli(['inventory', '--machines', machines], ROOT);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^API server {6}${url.replace(/\./g, '\\.')}( |$)`, 'm'));
    const json = JSON.parse((await runCli(['inventory', '--machines', machines, '--json'], ROOT)).stdout) as { apiServerUrl: string; apiServerName: string };
    expect(json.apiServerUrl).toBe(url);
    expect(url).toContain(json.apiServerName);
  });
});

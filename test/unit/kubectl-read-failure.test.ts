// A read of the API that fails says why: kubectl writes its error on stderr, which a probe drops, so
// the object reads (cluster-objects, pods-labelled) carry it on stdout when kubectl fails. Run by
// bash here with a kubectl that refuses, as kubectl does when the API server is down.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getObjectsCommand, podsLabelled, readObjects } from '../../src/probes/kubectl.ts';
import type { Command } from '../../src/shell.ts';

const REFUSED = 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?';

/** Runs a probe's command with PATH's kubectl printing `stdout` and `stderr` and exiting `code`; its exit code and stdout, as a probe gets them. */
function runWithKubectl(cmd: Command, stdout: string, stderr: string, code: number): { code: number; stdout: string } {
  const bin = mkdtempSync(join(tmpdir(), 'hardway-kubectl-'));
  writeFileSync(join(bin, 'kubectl'), `#!/bin/sh\nprintf '%s' '${stdout}'\necho '${stderr}' >&2\nexit ${code}\n`);
  chmodSync(join(bin, 'kubectl'), 0o755);
  try {
    return { code: 0, stdout: execFileSync('bash', ['-c', cmd.text], { env: { PATH: `${bin}:/usr/bin:/bin` }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) };
  } catch (e) {
    const err = e as { status: number; stdout: string };
    return { code: err.status, stdout: err.stdout };
  }
}

describe('a failed read of the API says why', () => {
  it('cluster-objects: the failure holds kubectl\'s error and exit code', () => {
    const read = readObjects(runWithKubectl(getObjectsCommand(['deployment/coredns']), '', REFUSED, 1));
    expect(read).toEqual({ ok: false, code: 1, error: REFUSED });
  });

  it('pods-labelled: the failure holds kubectl\'s error and exit code', () => {
    const read = readObjects(runWithKubectl(podsLabelled.ask('kube-system', 'k8s-app=kube-dns').cmd, '', REFUSED, 1));
    expect(read).toEqual({ ok: false, code: 1, error: REFUSED });
  });

  it('a read that succeeds gives kubectl\'s JSON alone, its warnings on stderr left out', () => {
    const json = '{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p"}}]}';
    const read = readObjects(runWithKubectl(podsLabelled.ask('kube-system', 'k8s-app=kube-dns').cmd, json, 'Warning: something', 0));
    expect(read).toEqual({ ok: true, items: [{ kind: 'Pod', metadata: { name: 'p' } }] });
  });
});

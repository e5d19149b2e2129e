// The engine's plan/apply loop on fake machines: apply then re-plan, idempotency errors, failures
// isolated per machine, --keep-going, dry-run, secrets, the concurrency cap.
import { describe, expect, it } from 'vitest';
import { sh, type Command } from '../../src/shell.ts';
import { shownCommand } from '../../src/transport/become.ts';
import { fileChanges } from '../../src/engine/desired.ts';
import { FailureError, PreconditionError } from '../../src/errors.ts';
import type { Step } from '../../src/engine/types.ts';
import { fakeCluster, inventoryOf, runEngine } from './engine.helpers.ts';
import { summaryLines } from '../../src/ui/summary.ts';
import { palette } from '../../src/ui/terminal.ts';

const demoFile: Step = {
  name: 'demo-file',
  title: 'Write /etc/demo.conf',
  targets: (inv) => inv.machines,
  plan: (ctx) => fileChanges(ctx.facts, [{ path: '/etc/demo.conf', content: Buffer.from(`name=${ctx.machine.hostname}\nport=1\n`), mode: 0o644 }]),
};

const restart: Step = {
  name: 'demo-restart',
  title: 'Restart demo',
  targets: (inv) => inv.machines,
  plan: async () => [{ kind: 'exec', cmd: sh`systemctl restart demo`, reason: 'always' }],
};

describe('engine: plan, apply, plan again', () => {
  it('applies the planned changes, then a second run changes nothing and only reads', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    const first = await runEngine([demoFile], inv, fakes);
    expect(first.result).toMatchObject({ ok: true, changed: 3, failed: 0 });
    expect(first.result.results.map((r) => [r.machine, r.status, r.changes])).toEqual([
      ['server', 'changed', 1],
      ['node-0', 'changed', 1],
      ['node-1', 'changed', 1],
    ]);
    expect(fakes.get('node-1')!.text('/etc/demo.conf')).toBe('name=node-1\nport=1\n');
    // Apply, then plan again: two stat reads of the file.
    expect(fakes.get('node-1')!.commands.filter((c) => c === 'facts: S /etc/demo.conf')).toHaveLength(2);

    for (const f of fakes.values()) f.commands.length = 0;
    const second = await runEngine([demoFile], inv, fakes);
    expect(second.result).toMatchObject({ ok: true, changed: 0 });
    expect(second.result.results.every((r) => r.status === 'unchanged')).toBe(true);
    for (const f of fakes.values()) expect(f.changesRun).toEqual([]);
    expect(second.output).toContain('node-0: demo-file: unchanged');
  });

  it('reports a step whose second plan is not empty as an idempotency bug', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    fakes.get('node-0')!.handlers.push([/^systemctl restart demo$/, () => ({ code: 0, stdout: '', stderr: '' })]);
    const { result, output } = await runEngine([restart], inv, fakes, { only: ['node-0'] });
    expect(result.ok).toBe(false);
    expect(result.results[0]).toMatchObject({ machine: 'node-0', status: 'failed', changes: 1 });
    expect(result.results[0]!.error).toMatch(/demo-restart is not idempotent on node-0: after applying 1 change\(s\) a second plan still has 1:\n  run: systemctl restart demo/);
    expect(output).toContain('node-0: demo-restart: failed after 1 change');
  });

  it('a failure on one machine does not stop the others; it names the command, exit code and stderr', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    const once: Step = { ...restart, plan: async (ctx) => ((fakes.get(ctx.machine.hostname)!.commands.includes('systemctl restart demo')) ? [] : restart.plan(ctx)) };
    fakes.get('node-1')!.handlers.push([/^systemctl restart demo$/, () => ({ code: 5, stdout: '', stderr: 'Job for demo.service failed.\n' })]);
    for (const name of ['server', 'node-0']) fakes.get(name)!.handlers.push([/^systemctl restart demo$/, () => ({ code: 0, stdout: '', stderr: '' })]);
    const { result, output } = await runEngine([once], inv, fakes);
    expect(result).toMatchObject({ ok: false, failed: 1, changed: 2 });
    const failed = result.results.find((r) => r.machine === 'node-1')!;
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('node-1: command failed (exit 5): systemctl restart demo');
    expect(failed.error).toContain('Job for demo.service failed.');
    expect(result.results.filter((r) => r.status === 'changed').map((r) => r.machine)).toEqual(['server', 'node-0']);
    // The progress says only that it failed; the error itself is the summary's, once (src/ui/summary.ts).
    expect(output).toMatch(/^node-1: demo-restart: failed$/m);
    expect(output).not.toContain('Job for demo.service failed.');
    expect(summaryLines(result, palette(false), false).join('\n')).toMatch(/^ {2}node-1 {2}failed +demo-restart: command failed \(exit 5\): systemctl restart demo\n {2}node-1: Job for demo.service failed\.$/m);
  });

  it('a machine that cannot be reached fails alone, with the transport error', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    fakes.get('node-0')!.execError = new FailureError('node-0: connection refused (10.240.0.20:22)', 'is the machine up?');
    const { result } = await runEngine([demoFile], inv, fakes);
    expect(result.results.map((r) => r.status)).toEqual(['changed', 'failed', 'changed']);
    expect(result.results[1]!.error).toBe('node-0: connection refused (10.240.0.20:22)\n  hint: is the machine up?');
  });

  it('without --keep-going a failed step stops every later step; with it, later steps skip only failed machines', async () => {
    const inv = inventoryOf();
    const failing: Step = { ...demoFile, name: 'demo-first' };
    const fresh = () => {
      const f = fakeCluster(inv);
      f.get('node-1')!.uploadError = new Error('node-1: SFTP write failed: No space left on device');
      return f;
    };
    const stop = await runEngine([failing, { ...demoFile, name: 'demo-second', plan: demoFile.plan }], inv, fresh());
    expect(stop.result.results.map((r) => `${r.step}/${r.machine}/${r.status}`)).toEqual([
      'demo-first/server/changed', 'demo-first/node-0/changed', 'demo-first/node-1/failed',
      'demo-second/server/skipped', 'demo-second/node-0/skipped', 'demo-second/node-1/skipped',
    ]);
    expect(stop.result.results[3]!.error).toMatch(/not run: step demo-first failed/);

    const keep = await runEngine([failing, { ...restart, name: 'demo-second', plan: async () => [] }], inv, fresh(), { keepGoing: true });
    expect(keep.result.results.map((r) => `${r.step}/${r.machine}/${r.status}`)).toEqual([
      'demo-first/server/changed', 'demo-first/node-0/changed', 'demo-first/node-1/failed',
      'demo-second/server/unchanged', 'demo-second/node-0/unchanged', 'demo-second/node-1/skipped',
    ]);
    expect(keep.result.results[5]!.error).toBe('not run: failed in step demo-first');
    expect(keep.result.failed).toBe(1);
  });

  it('with --keep-going, a step that could not start (precondition) does not skip later steps on that machine', async () => {
    const inv = inventoryOf();
    const needsBinaries: Step = {
      ...demoFile,
      name: 'needs-binaries',
      plan: async (ctx) => {
        if (ctx.machine.hostname === 'node-1') throw new PreconditionError('missing in downloads/: worker/kubelet', 'run "hardway download" first');
        return demoFile.plan(ctx);
      },
    };
    const later: Step = { ...restart, name: 'later', plan: async () => [] };
    const { result } = await runEngine([needsBinaries, later], inv, fakeCluster(inv), { keepGoing: true });
    expect(result.results.map((r) => `${r.step}/${r.machine}/${r.status}`)).toEqual([
      'needs-binaries/server/changed', 'needs-binaries/node-0/changed', 'needs-binaries/node-1/failed',
      'later/server/unchanged', 'later/node-0/unchanged', 'later/node-1/unchanged',
    ]);
    expect(result.results[2]!.error).toBe('missing in downloads/: worker/kubelet\n  hint: run "hardway download" first');
  });

  it('a file whose content is right but whose mode and owner are wrong gets chmod/chown, not an upload', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => ({ files: { '/etc/demo.conf': { content: `name=${h}\nport=1\n`, mode: 0o600, owner: 'nobody:nogroup' } } }));
    const { result } = await runEngine([demoFile], inv, fakes, { only: ['server'] });
    expect(result.results[0]).toMatchObject({ status: 'changed', changes: 2 });
    const server = fakes.get('server')!;
    expect(server.uploads).toEqual([]);
    expect(server.changesRun).toEqual(['chmod 0644 /etc/demo.conf', 'chown root:root /etc/demo.conf']);
    expect(server.files.get('/etc/demo.conf')).toMatchObject({ mode: 0o644, owner: 'root:root' });
  });

  it('runs verify after the re-plan, and a failing verify fails that machine', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    const seen: string[] = [];
    const verified: Step = {
      ...demoFile,
      async verify(ctx) {
        seen.push(`${ctx.machine.hostname}:${ctx.applied.length}`);
        if (ctx.machine.hostname === 'node-0') throw new FailureError('node-0: demo does not answer on port 1');
      },
    };
    const { result } = await runEngine([verified], inv, fakes);
    expect(seen.sort()).toEqual(['node-0:1', 'node-1:1', 'server:1']);
    expect(result.results.find((r) => r.machine === 'node-0')).toMatchObject({ status: 'failed', changes: 1, error: 'node-0: demo does not answer on port 1' });
  });

  it('works on at most --concurrency machines at once within a step', async () => {
    const inv = inventoryOf(Array.from({ length: 9 }, (_, i) => `10.240.0.${20 + i} node-${i}.kubernetes.local node-${i} 10.200.${i}.0/24`).join('\n') + '\n10.240.0.10 server.kubernetes.local server\n');
    let now = 0;
    let max = 0;
    const slow: Step = {
      ...demoFile,
      async plan() {
        max = Math.max(max, ++now);
        await new Promise((r) => setTimeout(r, 10));
        now--;
        return [];
      },
    };
    await runEngine([slow], inv, fakeCluster(inv), { concurrency: 3 });
    expect(max).toBe(3);
  });
});

describe('engine: dry run', () => {
  it('shows each command as the transport would run it: through sudo -n for a login raised with sudo', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    // The SSH transport of a login raised with sudo describes its commands so (transport-sudo.test.ts).
    for (const f of fakes.values()) Object.assign(f, { describe: (cmd: Command) => shownCommand(cmd.text, 'sudo') });
    const { output } = await runEngine([restart], inv, fakes, { dryRun: true });
    expect(output).toContain("node-0:   run: sudo -n sh -c 'systemctl restart demo' (always)");
    const plain = await runEngine([restart], inv, fakeCluster(inv), { dryRun: true });
    expect(plain.output).toContain('node-0:   run: systemctl restart demo (always)');
  });

  it('applies nothing and shows a unified diff per machine', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => ({ files: { '/etc/demo.conf': `name=${h}\nport=2\n` } }));
    const { result, output } = await runEngine([demoFile], inv, fakes, { dryRun: true });
    expect(result).toMatchObject({ ok: true, changed: 3 });
    expect(result.results.every((r) => r.status === 'changed' && r.changes === 1)).toBe(true);
    for (const f of fakes.values()) {
      expect(f.uploads).toEqual([]);
      expect(f.changesRun).toEqual([]);
      expect(f.text('/etc/demo.conf')).toMatch(/port=2/);
    }
    expect(output).toContain('node-0: demo-file: would change (1 change)');
    expect(output).toContain(
      [
        'node-0:   put /etc/demo.conf 0644 root:root (content differs)',
        'node-0:     --- /etc/demo.conf (now on node-0)',
        'node-0:     +++ /etc/demo.conf (planned)',
        'node-0:     @@ -1,2 +1,2 @@',
        'node-0:      name=node-0',
        'node-0:     -port=2',
        'node-0:     +port=1',
      ].join('\n'),
    );
  });

  it('never shows or logs a secret file, in dry-run or when applying', async () => {
    const inv = inventoryOf();
    const key = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n';
    const token = 'c2VjcmV0LXRva2VuLXZhbHVlLTEyMzQ1Njc4OTA=';
    const secret: Step = {
      name: 'demo-secret',
      title: 'Install a key',
      targets: (i) => i.machines.slice(0, 1),
      plan: async (ctx) => [
        ...(await fileChanges(ctx.facts, [{ path: '/var/lib/demo/demo.key', content: Buffer.from(key), mode: 0o600, secret: true }])),
        ...((await ctx.facts.stat(['/var/lib/demo/token'])).get('/var/lib/demo/token')!.exists
          ? []
          : [{ kind: 'exec' as const, cmd: sh`install -m 0600 /dev/stdin /var/lib/demo/token`, stdin: token, secret: true, reason: 'missing' }]),
      ],
    };
    const fakes = fakeCluster(inv, () => ({ files: { '/var/lib/demo/demo.key': { content: 'old key material', mode: 0o600 } } }));
    fakes.get('server')!.handlers.push([/^install -m 0600 \/dev\/stdin (\S+)$/, (m, t, stdin) => {
      t.files.set(m[1]!, { content: Buffer.from(stdin), mode: 0o600, owner: 'root:root' });
      return { code: 0, stdout: '', stderr: '' };
    }]);
    const dry = await runEngine([secret], inv, fakes, { dryRun: true });
    expect(dry.output).toContain('server:     content changed (secret, not shown)');
    expect(dry.output).toContain('server:   put /var/lib/demo/demo.key 0600 root:root (secret) (content differs)');
    // The current content of a secret file is not even read for a diff.
    expect(fakes.get('server')!.commands).not.toContain('facts: R /var/lib/demo/demo.key');
    const real = await runEngine([secret], inv, fakes);
    expect(real.result.results[0]).toMatchObject({ status: 'changed', changes: 2 });
    for (const text of [dry.output, dry.log, real.output, real.log]) {
      expect(text).not.toContain('MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7');
      expect(text).not.toContain(token);
      expect(text).not.toContain('old key material');
    }
    expect(real.log).toContain('upload /var/lib/demo/demo.key mode 0600 owner root:root');
    expect(real.log).toContain('--- stdin:\n[REDACTED]');
  });
});

// `hardway encryption-config --rotate`: the secrets' encryption key replaced on a running cluster,
// in the stages of the Kubernetes docs, each followed by `hardway distribute` (a rolling restart of
// the API servers, one control plane at a time):
//   1/4 add      a new key joins behind the one in use: every API server can decrypt with it
//   2/4 promote  it goes first: every API server encrypts with it, the old one still decrypts
//   3/4 rewrite  every Secret written again through the API, so etcd holds it under the new key
//   4/4 drop     the old key leaves the config
// One run goes through every stage that is left. Where it is comes from pki/encryption-config.yaml
// alone (src/certs/encryption-rotation.ts), and each stage first distributes what pki/ holds, so a
// run killed anywhere is completed by the next: nothing is written to pki/ before every machine
// holds the stage before it, and the rewrite may run any number of times.
import { PassThrough } from 'node:stream';
import type { CliContext } from '../cli/command.ts';
import { say } from '../cli/command.ts';
import { addKey, dropKey, encryptionStageNumber as n, encryptionState, keysLine, promoteKey, type EncryptionConfigState } from '../certs/encryption-rotation.ts';
import { FailureError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';

/** The command line that runs the rotation, as messages say it. */
export const ROTATE_LINE = 'hardway encryption-config --rotate --yes';

/** What a rotation does with the machines and the API; tests pass their own. */
export interface RotationDeps {
  /** `hardway distribute` for real; the number of machines it changed. A failure throws. */
  distribute(): Promise<number>;
  /** Every Secret written again through the API; how many. */
  rewriteSecrets(): Promise<number>;
}

/** Says what the next run of --rotate would do, from pki/ alone (--dry-run). */
export function rotationPlan(inv: Inventory): string[] {
  const { keys, state } = encryptionState(inv.dir);
  const [first, second] = keys;
  const newName = state === 'one-key' ? `key${Number(first!.name.slice(3)) + 1}` : state === 'added' ? second!.name : first!.name;
  const oldName = state === 'added' ? first!.name : state === 'promoted' ? second!.name : first!.name;
  const lines = [`${PKI.encryptionConfig} holds ${keysLine(keys)}`];
  const rest = [
    `${n('add')} add: ${newName}, a new random key, joins behind ${oldName}; hardway distribute (every API server can decrypt with it)`,
    `${n('promote')} promote: ${newName} goes first; hardway distribute (every API server encrypts with it, ${oldName} still decrypts)`,
    `${n('rewrite')} rewrite: every Secret is written again through the API server, so etcd stores it under ${newName}`,
    `${n('drop')} drop: ${oldName} leaves the config; hardway distribute`,
  ];
  if (state === 'one-key') {
    lines.push('would first run hardway distribute (a rotation starts only when every machine holds pki/\'s files; if that changes anything, the run stops there), then:', ...rest);
  } else {
    lines.push(`a rotation to ${newName} is under way; would first run hardway distribute (every machine holds pki/'s config), then:`, ...(state === 'added' ? rest.slice(1) : rest.slice(2)));
  }
  lines.push('nothing was changed (--dry-run)');
  return lines;
}

/** Runs every stage of the rotation that is left; the caller holds the project's lock. */
export async function rotateEncryptionKey(inv: Inventory, ctx: Pick<CliContext, 'stdout'>, deps: RotationDeps): Promise<number> {
  const out = (line: string) => say(ctx.stdout, line);
  let st: EncryptionConfigState = encryptionState(inv.dir);
  const distribute = async (why: string) => {
    out(`hardway distribute: ${why}`);
    return deps.distribute();
  };
  if (st.state === 'one-key') {
    const changed = await distribute('a rotation starts only when every machine holds pki/\'s files');
    if (changed > 0) {
      out(`distribute changed ${changed} machine(s): they did not hold pki/'s files (an earlier rotation stopped before its last distribute, or files were waiting for one); ` +
        `${PKI.encryptionConfig} holds ${keysLine(st.keys)} and every machine now does too. Run ${ROTATE_LINE} again to start a rotation`);
      return 0;
    }
    const name = addKey(inv.dir);
    out(`encryption key rotation ${n('add')} (add): ${name}, a new random key, joins ${PKI.encryptionConfig} behind ${st.keys[0]!.name}`);
    st = encryptionState(inv.dir);
  }
  if (st.state === 'added') {
    await distribute(`every API server learns ${st.keys[1]!.name} before any encrypts with it`);
    promoteKey(inv.dir);
    out(`encryption key rotation ${n('promote')} (promote): ${st.keys[1]!.name} encrypts now, ${st.keys[0]!.name} still decrypts`);
    st = encryptionState(inv.dir);
  }
  const fresh = st.keys[0]!;
  const old = st.keys[1]!;
  await distribute(`every API server encrypts with ${fresh.name} before the Secrets are rewritten`);
  const count = await deps.rewriteSecrets();
  out(`encryption key rotation ${n('rewrite')} (rewrite): ${count} Secret(s) written again through the API server, stored under ${fresh.name}`);
  dropKey(inv.dir);
  out(`encryption key rotation ${n('drop')} (drop): ${old.name} leaves ${PKI.encryptionConfig}`);
  await distribute(`no API server holds ${old.name} any more`);
  out(`done: every Secret is stored under ${fresh.name}, the only key of ${PKI.encryptionConfig} and of every control plane's config. ` +
    `Back up ${PKI.encryptionConfig} again; an etcd snapshot saved before the rotation needs ${old.name} to read its Secrets, so keep a copy of the old file with such snapshots`);
  return 0;
}

/** The real collaborators: distribute over SSH (inside this run's lock) and the rewrite through the API server from the jumpbox. */
export function liveRotationDeps(inv: Inventory, ctx: CliContext): RotationDeps {
  return {
    async distribute() {
      const [{ remoteEntry }, { runRemote }] = await Promise.all([import('../command-table.ts'), import('./remote.ts')]);
      const values = { ...ctx.values, 'dry-run': false, 'keep-going': false, json: false, node: undefined, only: undefined, concurrency: '10', machines: inv.machinesFile };
      const { code, result } = await runRemote(remoteEntry('distribute'), { ...ctx, values, positionals: [] }, { lockHeld: true });
      if (code !== 0) {
        throw new FailureError(`hardway distribute failed, so the rotation stopped where it was (${PKI.encryptionConfig} holds ${keysLine(encryptionState(inv.dir).keys)})`,
          `fix what distribute said, then run ${ROTATE_LINE} again: it goes on from there`);
      }
      return result.results.filter((r) => r.status === 'changed').length;
    },
    async rewriteSecrets() {
      const [{ ClusterApi }, { rewriteSecrets }, { NoAnswer }] = await Promise.all([
        import('../cluster-api/cluster-api.ts'), import('../cluster-api/rewrite-secrets.ts'), import('../cluster-api/https-endpoint.ts')]);
      const api = ClusterApi.forRun(inv);
      const server = api?.apiServer();
      if (!api || !server) {
        throw new FailureError('the rewrite of every Secret asks the API server straight from the jumpbox (with pki/admin.crt), which this project cannot (ssh.jumpHost, or no admin certificate in pki/); the old key stays until it is done',
          `behind ssh.jumpHost a rotation is not supported yet; otherwise run hardway certs and hardway kubeconfigs, then ${ROTATE_LINE} again`);
      }
      try {
        return await rewriteSecrets(server);
      } catch (e) {
        if (e instanceof NoAnswer) throw new FailureError(`${e.message}; the Secrets were not all rewritten`, `run ${ROTATE_LINE} again once the API server answers: the rewrite starts over`);
        throw e;
      } finally {
        api.close();
      }
    },
  };
}

/** `--status`: the keys pki/ holds and, for each control plane, whether it holds pki/'s files (what distribute --dry-run would change there). */
export async function rotationStatus(inv: Inventory, ctx: CliContext, machinesBehind: (inv: Inventory, ctx: CliContext) => Promise<string[]>): Promise<number> {
  const out = (line: string) => say(ctx.stdout, line);
  const { keys, state } = encryptionState(inv.dir);
  out(`${PKI.encryptionConfig}: ${keysLine(keys)}`);
  out(state === 'one-key' ? `no rotation under way; ${ROTATE_LINE} starts one`
    : state === 'added' ? `rotation under way: stage ${n('add')} (add) done, ${n('promote')} (promote) next; ${ROTATE_LINE} goes on`
      : `rotation under way: stage ${n('promote')} (promote) done, ${n('rewrite')} (rewrite) and ${n('drop')} (drop) next; ${ROTATE_LINE} goes on`);
  const behind = await machinesBehind(inv, { ...ctx, stdout: quiet() });
  let ok = true;
  for (const m of inv.controlPlanes) {
    const b = behind.find((line) => line.startsWith(`${m.hostname} (`));
    if (b) ok = false;
    out(b ? `  ${b}: it may hold another config than pki/'s; hardway distribute installs pki/'s` : `  ${m.hostname}: holds pki/'s config (${keys.map((k) => k.name).join(', ')})`);
  }
  return ok ? 0 : 1;
}

function quiet(): PassThrough {
  const q = new PassThrough();
  q.resume();
  return q;
}

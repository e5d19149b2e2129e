// Before a first `up` makes pki/ (no CA there yet; RSA keys take seconds each), what can fail
// without it is tried first, in one short round: a key to offer each machine (read here, no network), then one connection to
// each, which proves it answers, its host key is known (or pinned with --accept-new-host-keys) and
// it lets us in. A machine that fails is one line; the run stops before anything is made.
import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { say } from '../cli/command.ts';
import { caIdentities } from '../certs/identities.ts';
import { trackPhase } from '../engine/in-flight.ts';
import type { Connectors } from '../engine/session.ts';
import { createLogger } from '../ui/logger.ts';
import { Redactor } from '../ui/redact.ts';
import { palette } from '../ui/terminal.ts';
import { preparePki } from './prepare-pki.ts';
import { FailureError, isExpectedError } from '../errors.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { authOffer } from '../transport/auth.ts';
import { ONE_ATTEMPT, hostConnector, type Connect } from '../transport/connector.ts';
import { resolveRoute } from '../transport/endpoint.ts';
import { widthOf, wrap } from '../ui/wrap.ts';
import type { TransportOptions } from '../transport/open.ts';

/** What a preflight needs: the machines, how to reach them (one attempt each), where its lines go. */
export interface PreflightRequest {
  inventory: Pick<Inventory, 'settings' | 'dir'>;
  machines: readonly Machine[];
  opts: TransportOptions;
  out: Writable;
  /** Machines tried at once (the run's --concurrency). */
  concurrency: number;
  /** Opens one machine's connection; default one attempt over SSH, as doctor tries. */
  connect?: Connect;
}

/** What `up` does before its steps: on a first run (no CA in pki/ yet) the preflight, then pki/; each said by a Ctrl-C meanwhile. */
export async function preflightThenPki(req: Omit<PreflightRequest, 'connect' | 'inventory'> & { command: string; inventory: Inventory; connectors?: Connectors }): Promise<void> {
  // What a Ctrl-C in the meantime says was going on (src/cli/interrupt.ts).
  const phase = async (line: string, work: () => Promise<void>) => {
    const done = trackPhase(`${req.command}: ${line}`);
    try {
      await work();
    } finally {
      done();
    }
  };
  if (caIdentities().some((ca) => !existsSync(join(req.inventory.dir, ca.files.crt)))) {
    const connect = req.connectors ? await connectorsAsConnect(req.connectors, req.out) : undefined;
    await phase('preflight: trying each machine once; nothing was made or changed yet', () => preflight({ ...req, ...(connect ? { connect } : {}) }));
  }
  await phase('making pki/ (keys, certificates, kubeconfigs, encryption config); no machine was changed yet', () => preparePki(req.inventory, req.out));
}

/** A test's connectors as the preflight's one connection per machine (production's is one SSH attempt, below). */
async function connectorsAsConnect(connectors: Connectors, out: Writable): Promise<Connect> {
  const logger = createLogger({ stream: out, verbose: false, colors: palette(false), redactor: new Redactor() });
  const factory = await connectors(logger, () => undefined);
  return (host) => factory(host.machine ? { name: host.name, machine: host.machine } : { name: 'jumpbox' });
}

/** One machine that cannot be worked on, and why (one line), with what to check. */
interface Refusal {
  machine: string;
  line: string;
  hint?: string;
}

/** Checks every machine as above; throws one FailureError naming each machine that failed (one line each, each hint once). */
export async function preflight(req: PreflightRequest): Promise<void> {
  const { machines, out } = req;
  // Wrapped to the terminal, each continuation under its text.
  const line = (text: string) => wrap(text, widthOf(out), 'preflight: ', '  ').forEach((l) => say(out, l));
  line(`${machines.length} machine(s): a key to offer, SSH and host key, before pki/ is made...`);
  // A connection of the caller's own (a test's) offers no key of this machine's to check.
  const noKey = req.connect ? [] : machines.flatMap((m) => keyProblem(m, req));
  const refusals = noKey.length > 0 ? noKey : await connectAll(req);
  if (refusals.length === 0) {
    line(`${machines.length} machine(s) reachable, host keys known, SSH accepted`);
    return;
  }
  for (const r of refusals) line(r.line);
  const hints = [...new Set(refusals.flatMap((r) => (r.hint ? [r.hint] : [])))];
  throw new FailureError(
    `${refusals.length} of ${machines.length} machine(s) cannot be worked on (${refusals.map((r) => r.machine).join(', ')}); nothing was made or changed`,
    hints.join('\n        '),
  );
}

/** A machine with no key to offer (no -i, ssh.identityFile, IdentityFile, ~/.ssh/id_* or agent): known without the network. */
function keyProblem(m: Machine, req: PreflightRequest): Refusal[] {
  const { opts } = req;
  const route = resolveRoute(m, req.inventory.settings.ssh, {
    dir: opts.dir, identityFiles: opts.identityFiles, sshConfigFile: opts.sshConfigFile,
    home: opts.home ?? homedir(), cwd: opts.cwd ?? process.cwd(), localUser: localUser(),
  });
  const agent = (opts.env ?? process.env).SSH_AUTH_SOCK || undefined;
  const offer = authOffer(route.target, agent);
  if (offer.methods.length > 0) return [];
  const why = offer.notes.length ? `: ${offer.notes.join('; ')}` : '';
  return [{
    machine: m.hostname,
    line: `${m.hostname}: no SSH key to offer ${route.target.display}${why}`,
    hint: 'pass -i KEY, set ssh.identityFile in cluster.yaml, or load a key into ssh-agent (ssh-add); its public key must be in the machine\'s authorized_keys',
  }];
}

/** One connection to each machine, `concurrency` at a time, closed at once; the refusals. */
async function connectAll(req: PreflightRequest): Promise<Refusal[]> {
  const connect = req.connect ?? hostConnector(req.inventory, { ...req.opts, ...ONE_ATTEMPT });
  const refusals: Refusal[] = [];
  const queue = [...req.machines];
  const worker = async () => {
    for (let m = queue.shift(); m; m = queue.shift()) {
      try {
        await (await connect({ name: m.hostname, machine: m })).close();
      } catch (e) {
        if (!isExpectedError(e)) throw e;
        // The transport's errors already start with the machine's name.
        const line = e.message.startsWith(`${m.hostname}: `) ? e.message : `${m.hostname}: ${e.message}`;
        refusals.push({ machine: m.hostname, line, hint: 'hint' in e ? e.hint : undefined });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(req.concurrency, req.machines.length)) }, worker));
  // In the order of machines.txt, whatever order they failed in.
  return req.machines.flatMap((m) => refusals.filter((r) => r.machine === m.hostname));
}

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'root';
  }
}

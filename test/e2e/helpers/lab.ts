/**
 * Shared end-to-end helper: a real hardway lab (systemd-nspawn machines with sshd and cloud-init)
 * for one test file, brought up through the CLI (`node bin/hardway.mjs lab up`) and ALWAYS taken
 * down again.
 *
 * API
 *   useLab(options) -> () => Lab
 *       Registers beforeAll (lab down of any leftover with that name, then lab up) and afterAll
 *       (lab down, even when the suite or beforeAll failed) in the calling describe/file. Returns a
 *       getter for the Lab; call it inside tests.
 *   startLab(options) -> Promise<Lab>     same, by hand (call lab.down() yourself, in afterAll).
 *   downLab(name)                          `hardway lab down --name NAME --yes` (idempotent).
 *   hardway(args, { cwd?, env? })          runs the CLI, resolves { code, stdout, stderr } (never throws).
 *
 *   options = { name, subnet, servers = 1, workers = 2, registry = false, loginUser? }   (registry: lab up --registry;
 *     loginUser: lab up --login-user NAME, the machines let in NAME with passwordless sudo, not root)
 *     Use your own name and subnet so suites never collide: lab suite e2e-lab 10.240.10.0/24,
 *     transport 10.240.20.0/24, engine 10.240.30.0/24.
 *
 *   Lab = {
 *     name, dir,                           dir: temp directory with machines.txt, cluster.yaml,
 *                                          id_ed25519, known_hosts, ssh_config (removed by down())
 *     machines: [{ hostname, fqdn, ip, role, podSubnet? }],   servers first ("server" or server-N), then node-0...
 *     sshConfig, knownHosts, identityFile: absolute paths inside dir
 *     ssh(machine, command)    -> { code, stdout, stderr }: system ssh, strict host-key checking (never throws);
 *                                 as root: with a loginUser, the command goes through sudo -n sh -c
 *     run(machine, command)    -> stdout; throws with machine, command and stderr on a non-zero exit
 *     hardway(args, opts?)     -> the CLI with cwd = dir (so machines.txt/cluster.yaml are found)
 *     down()                   -> takes the lab down and removes dir
 *   }
 *
 * If this host cannot run a lab (not root, systemd-nspawn/debootstrap missing) beforeAll fails with
 * the CLI's message: suites that need a lab fail loudly instead of skipping. The first lab on a
 * fresh host builds the root filesystem (about 4 minutes); the e2e hook timeout allows for it.
 */
import { unwrapErrors } from '../../helpers/unwrap.ts';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** The repository root and the CLI entry point. */
export const REPO = resolve(import.meta.dirname, '../../..');
export const HARDWAY = join(REPO, 'bin/hardway.mjs');

/** Result of a command run by the helpers. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a lab suite asks for. */
export interface LabOptions {
  name: string;
  subnet: string;
  servers?: number;
  workers?: number;
  /** `lab up --registry`: the registry machine too (not in machines.txt). */
  registry?: boolean;
  /** The lab's project directory (made anew); a fresh temp directory when not given. */
  dir?: string;
  /** `lab up --login-user NAME`: machines as cloud images come (NAME with passwordless sudo, root's SSH refused). */
  loginUser?: string;
}

/** One machine of the lab, as in its machines.txt. */
export interface LabMachineInfo {
  hostname: string;
  fqdn: string;
  ip: string;
  role: 'control-plane' | 'worker';
  podSubnet?: string;
}

/** A running lab, see the API at the top of this file. */
export interface Lab {
  name: string;
  dir: string;
  machines: LabMachineInfo[];
  sshConfig: string;
  knownHosts: string;
  identityFile: string;
  /** The user hardway and the helpers log in as when not root (`lab up --login-user`). */
  loginUser?: string;
  /** `command` as the login runs it as root: itself, or through `sudo -n sh -c` for a login user. */
  asRoot(command: string): string;
  ssh(machine: string, command: string): Promise<RunResult>;
  run(machine: string, command: string): Promise<string>;
  hardway(args: string[], opts?: { env?: NodeJS.ProcessEnv }): Promise<RunResult>;
  down(): Promise<void>;
}

function exec(file: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((done) => {
    execFile(file, args, { cwd: opts.cwd ?? REPO, env: { ...process.env, CI: 'true', ...opts.env }, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      });
  });
}

/** Runs `node bin/hardway.mjs ...args`; never throws. Its errors, wrapped at 80 columns on the pipe, come back unwrapped (whole lines to compare). */
export async function hardway(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  const r = await exec(process.execPath, [HARDWAY, ...args], opts);
  return { ...r, stderr: unwrapErrors(r.stderr) };
}

/** `hardway lab down --name NAME --yes`; throws if it fails. */
export async function downLab(name: string): Promise<void> {
  const r = await hardway(['lab', 'down', '--name', name, '--yes']);
  if (r.code !== 0) throw new Error(`hardway lab down --name ${name} --yes failed (exit ${r.code}):\n${r.stderr}${r.stdout}`);
}

/** Brings a lab up through the CLI (after taking down any leftover of the same name). */
export async function startLab(o: LabOptions): Promise<Lab> {
  await downLab(o.name);
  if (o.dir) {
    rmSync(o.dir, { recursive: true, force: true });
    mkdirSync(o.dir, { recursive: true });
  }
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), `hardway-${o.name}-`));
  const args = ['lab', 'up', '--name', o.name, '--subnet', o.subnet, '--servers', String(o.servers ?? 1),
    '--workers', String(o.workers ?? 2), '--dir', dir, ...(o.registry ? ['--registry'] : []),
    ...(o.loginUser ? ['--login-user', o.loginUser] : [])];
  const up = await hardway(args);
  if (up.code !== 0) {
    await downLab(o.name).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`hardway ${args.join(' ')} failed (exit ${up.code}):\n${up.stderr}\n${up.stdout}`);
  }
  return labAt(o.name, dir, o.loginUser);
}

/** The machines of a project's machines.txt (servers first, as the lab writes them). */
export function readMachines(file: string): LabMachineInfo[] {
  return readFileSync(file, 'utf8').split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const [ip, fqdn, hostname, podSubnet] = l.trim().split(/\s+/) as [string, string, string, string?];
      return { ip, fqdn, hostname, role: podSubnet ? 'worker' : 'control-plane', ...(podSubnet ? { podSubnet } : {}) } as LabMachineInfo;
    });
}

/** A Lab for the running lab NAME whose project is DIR (machines as its machines.txt lists them now; loginUser: made with --login-user). */
export function labAt(name: string, dir: string, loginUser?: string): Lab {
  const machines = readMachines(join(dir, 'machines.txt'));
  const sshConfig = join(dir, 'ssh_config');
  // The helpers' commands read and break what root owns: through sudo where the login is not root.
  const asRoot = (command: string) => (loginUser ? `sudo -n sh -c '${command.replace(/'/g, `'\\''`)}'` : command);
  const ssh = (machine: string, command: string) =>
    exec('ssh', ['-F', sshConfig, '-o', 'BatchMode=yes', machine, asRoot(command)]);
  return {
    name,
    dir,
    machines,
    sshConfig,
    knownHosts: join(dir, 'known_hosts'),
    identityFile: join(dir, 'id_ed25519'),
    ...(loginUser ? { loginUser } : {}),
    asRoot,
    ssh,
    async run(machine, command) {
      const r = await ssh(machine, command);
      if (r.code !== 0) throw new Error(`${machine}: command failed (exit ${r.code}): ${command}\n${r.stderr}`);
      return r.stdout;
    },
    hardway: (a, opts) => hardway(a, { cwd: dir, env: opts?.env }),
    async down() {
      await downLab(name);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Registers beforeAll (lab up) and afterAll (lab down, always) and returns a getter for the lab. */
export function useLab(o: LabOptions): () => Lab {
  let lab: Lab | undefined;
  beforeAll(async () => {
    lab = await startLab(o);
  });
  afterAll(async () => {
    if (lab) await lab.down();
    else await downLab(o.name);
  });
  return () => {
    if (!lab) throw new Error(`lab "${o.name}" is not up (its beforeAll failed; see the error there)`);
    return lab;
  };
}

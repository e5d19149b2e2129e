// bench:up --sudo: the same lab reached two ways. The lab is made with --login-user (root's SSH
// refused, as cloud images come); for the bench only, root is let in with the lab key too, and a
// copy of the project logs in as root, so a no-op through sudo and one as root take turns on the
// very same machines (issue "Machines as they come": sudo may cost at most 10% more).
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadInventory } from '../../src/inventory.ts';
import { mustSucceed, runTimed } from './run.ts';

/** Lets root in with the login user's key on every machine of the project in DIR (through sudo). */
async function letRootIn(dir: string): Promise<void> {
  const sshConfig = join(dir, 'ssh_config');
  for (const m of loadInventory(join(dir, 'machines.txt')).machines) {
    const script = "sed -i 's/^PermitRootLogin no$/PermitRootLogin prohibit-password/' /etc/ssh/sshd_config.d/10-hardway.conf && " +
      'install -d -m 0700 /root/.ssh && install -m 0600 "$HOME/.ssh/authorized_keys" /root/.ssh/authorized_keys && systemctl reload ssh';
    mustSucceed(await runTimed('ssh', ['-F', sshConfig, '-o', 'BatchMode=yes', m.hostname, `sudo -n sh -c '${script.replace(/'/g, `'\\''`)}'`]), `letting root in on ${m.hostname}`);
  }
}

/** A copy of the project in DIR that logs in as root (cluster.yaml's ssh.user, ssh_config's User); returns its directory. */
export async function rootTwin(dir: string, loginUser: string): Promise<string> {
  await letRootIn(dir);
  const twin = `${dir}-as-root`;
  cpSync(dir, twin, { recursive: true, verbatimSymlinks: true });
  const yaml = join(twin, 'cluster.yaml');
  writeFileSync(yaml, readFileSync(yaml, 'utf8').replace(new RegExp(`^(\\s+user:) ${loginUser}$`, 'm'), '$1 root'));
  const config = join(twin, 'ssh_config');
  writeFileSync(config, readFileSync(config, 'utf8').replaceAll(`User ${loginUser}`, 'User root').replaceAll(dir, twin));
  return twin;
}

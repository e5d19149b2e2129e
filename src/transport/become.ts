// Raising commands to root for a login that is not root: the one place it happens. Every command
// of an SSH transport whose `become` is sudo goes out as one `sudo -n sh -c '...'` (the facts
// batch included: one sudo per command, never one per probe). `-n` makes sudo fail at once where it
// would ask for a password: hardway never asks for one, nor stores one. The transport checks sudo
// once per connection (sudoCheck) and turns its refusal into a SudoError that says what to add.
import type { Become } from '../cluster-settings.ts';
import { quote, sh } from '../shell.ts';
import { TransportError } from './errors.ts';

/** How one transport's commands run: as the login user, or raised with `sudo -n`. */
export interface Raise {
  /** The login user, named by errors and by the staging of uploads. */
  user: string;
  become: Become;
}

/** Wraps the text a login shell runs so that it runs as root (with sudo) or as is (none). */
export function raisedText(text: string, become: Become): string {
  return become === 'sudo' ? `sudo -n /bin/sh -c ${quote(text)}` : text;
}

/** The command as a person reads it in the run log and in --dry-run: what actually runs on the machine. */
export function shownCommand(text: string, become: Become): string {
  return become === 'sudo' ? `sudo -n sh -c ${quote(text)}` : text;
}

/** What the transport runs once per connection before any command: sudo must answer without a password. */
export const SUDO_CHECK = sh`sudo -n true`;

/** The one line of /etc/sudoers.d/ a user needs for hardway. */
export function sudoersLine(user: string): string {
  return `${user} ALL=(ALL) NOPASSWD:ALL`;
}

/** sudo refused to run commands for the login user without a password: nothing was done on the machine. */
export class SudoError extends TransportError {
  constructor(
    machine: string,
    readonly user: string,
    readonly reason: string,
    sudoSaid: string,
    hint: string,
  ) {
    super(machine, `${user} cannot run commands as root with sudo -n: ${reason}` + (sudoSaid ? ` (sudo said: ${sudoSaid})` : '') + '; nothing was done on this machine', hint);
    this.name = 'SudoError';
  }
}

/**
 * Why `sudo -n true` failed, from sudo's own messages: a password is required (no NOPASSWD, or a
 * user sudo does not know asks first), the user is not in sudoers, requiretty, sudo not installed.
 */
export function sudoRefusal(machine: string, user: string, code: number, stderr: string): SudoError {
  const said = stderr.trim().split('\n').filter((l) => !/unable to resolve host/.test(l)).join('; ');
  const line = sudoersLine(user);
  const add = `on ${machine}, as root: echo '${line}' > /etc/sudoers.d/${user} && chmod 0440 /etc/sudoers.d/${user}` +
    ' (hardway never asks for a password, so sudo must not want one)';
  if (code === 127 || /sudo: (command )?not found|sudo: No such file/.test(stderr)) {
    return new SudoError(machine, user, 'sudo is not installed', said, `on ${machine}, as root: apt-get install sudo, then ${add.replace(/^on [^,]+, as root: /, '')}`);
  }
  if (/must have a tty|requiretty/i.test(stderr)) {
    return new SudoError(machine, user, 'sudo wants a terminal (requiretty)', said,
      `on ${machine}, as root: echo 'Defaults:${user} !requiretty' >> /etc/sudoers.d/${user}; and the user needs '${line}' in /etc/sudoers.d/${user}`);
  }
  if (/not in the sudoers file|not allowed to execute|may not run sudo/i.test(stderr)) {
    return new SudoError(machine, user, `${user} may not use sudo there`, said, add);
  }
  if (/password is required|terminal is required to read the password|askpass/i.test(stderr)) {
    return new SudoError(machine, user, 'sudo asks for a password', said, add);
  }
  return new SudoError(machine, user, `sudo -n true exited with ${code}`, said, add);
}

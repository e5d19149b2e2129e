// Who the lab's machines let in: root (the default), or, with `lab up --login-user NAME`, the user
// NAME with passwordless sudo as cloud images come, root's SSH login refused.
import { InputError } from '../errors.ts';
import { quote } from '../shell.ts';

/** A login user name as cluster.yaml's ssh.user takes it: no shell characters, no leading dash. */
const LOGIN_USER = /^[a-z_][a-z0-9_-]{0,31}$/;

/** Checks --login-user; root is the same as not giving it. */
export function checkLoginUser(user: string): string | undefined {
  if (!LOGIN_USER.test(user)) {
    throw new InputError(`--login-user: expected a user name, got ${JSON.stringify(user)}`, 'a login name of lower-case letters, digits, _ and - (e.g. debian, ubuntu, admin)');
  }
  return user === 'root' ? undefined : user;
}

/** A command line that runs as root on a lab machine through its ssh_config login: as is for root, through sudo -n for a login user. */
export function asRoot(loginUser: string | undefined, command: string): string {
  return loginUser === undefined ? command : `sudo -n sh -c ${quote(command)}`;
}

// Who the lab's machines let in: root (the default), or, with `lab up --login-user NAME`, the user
// NAME with passwordless sudo as cloud images come, root's SSH login refused. The lab's own commands
// on its machines go through the host connector, which raises them as cluster.yaml's ssh.user says.
import { InputError } from '../errors.ts';

/** A login user name as cluster.yaml's ssh.user takes it: no shell characters, no leading dash. */
const LOGIN_USER = /^[a-z_][a-z0-9_-]{0,31}$/;

/** Checks --login-user; root is the same as not giving it. */
export function checkLoginUser(user: string): string | undefined {
  if (!LOGIN_USER.test(user)) {
    throw new InputError(`--login-user: expected a user name, got ${JSON.stringify(user)}`, 'a login name of lower-case letters, digits, _ and - (e.g. debian, ubuntu, admin)');
  }
  return user === 'root' ? undefined : user;
}

// The local API server of a control-plane machine, asked with kubectl and the admin kubeconfig
// that distribute installs there: kubelet-rbac applies through it, and a rolling restart waits on it.
import { SERVER } from '../layout.ts';
import { sh, type Command } from '../shell.ts';

/** kubectl against the local API server (admin kubeconfig), each request cut off after `timeoutS` (5 s). */
export const localKubectl = (args: Command, timeoutS = 5): Command => sh`kubectl --kubeconfig=${SERVER.adminKubeconfig} --request-timeout=${`${timeoutS}s`} ${args}`;

/** Waits up to `timeoutS` for the local API server's /readyz; prints the last error on failure. Ends the shell (exit). */
export function waitApiCommand(timeoutS: number): Command {
  return sh`for i in $(seq ${timeoutS}); do out=$(${localKubectl(sh`get --raw=/readyz`)} 2>&1) && exit 0; [ "$i" -lt ${timeoutS} ] && sleep 1; done; echo "$out" >&2; exit 1`;
}

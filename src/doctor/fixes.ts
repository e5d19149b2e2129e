// The command lines doctor suggests: each one a real hardway command that undoes that cause, as a
// user types it in the project directory (with --machines when doctor was given one).
import type { DoctorContext } from './types.ts';

/** `hardway <words> --node MACHINE` plus the project's own arguments. */
export function hardwayFix(ctx: DoctorContext, words: string, machine: string): string {
  return `hardway ${words} --node ${machine}${ctx.projectArgs}`;
}

/** `hardway <words>` for the whole project (no --node: e.g. a command whose steps run on several kinds of machine). */
export function projectFix(ctx: DoctorContext, words: string): string {
  return `hardway ${words}${ctx.projectArgs}`;
}

/** The worker step that owns a component: `hardway bootstrap-workers --only STEP --node MACHINE`. */
export function workerStepFix(ctx: DoctorContext, step: 'worker-os' | 'containerd' | 'cni' | 'kubelet' | 'kube-proxy', machine: string): string {
  return hardwayFix(ctx, `bootstrap-workers --only ${step}`, machine);
}

/** What brings back a machine that does not answer: in a lab, start it (or reboot it if it runs); elsewhere nothing hardway can do. */
export function unreachableFix(ctx: DoctorContext, machine: string): string | null {
  if (!ctx.lab) return null;
  const verb = ctx.lab.running.includes(machine) ? 'reboot' : 'start';
  return `hardway lab ${verb} ${machine} --name ${ctx.lab.name}`;
}

/** The step that installs a service on a machine of either role. */
export function serviceFix(ctx: DoctorContext, service: string, machine: string): string {
  if (service === 'etcd') return hardwayFix(ctx, 'bootstrap-etcd', machine);
  if (service === 'containerd' || service === 'kubelet' || service === 'kube-proxy') return workerStepFix(ctx, service, machine);
  return hardwayFix(ctx, 'bootstrap-control-plane', machine);
}

// What the API says of pods that do not run: pure readings of `kubectl get pods -o json`, shared by
// the dns step (which replaces CoreDNS pods that crash-loop) and doctor (which explains them).

/** A pod as `kubectl get pods -o json` gives it, as far as telling why it does not run goes. */
export interface PodObject {
  kind?: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string; creationTimestamp?: string };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
    containerStatuses?: ContainerStatus[];
  };
  items?: PodObject[];
}

interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: { reason?: string; message?: string; exitCode?: number };
}

interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  state?: ContainerState;
  lastState?: ContainerState;
}

/** How a pod fails to run. */
export type PodTrouble = 'crash-loop' | 'image-pull' | 'creating' | 'pending' | 'not-ready';

/** One pod that does not run as it should, and the API's words for why. */
export interface PodProblem {
  name: string;
  namespace: string;
  node: string;
  labels: Record<string, string>;
  trouble: PodTrouble;
  /** The container's reason and message, or the last crash's (its log's last lines with FallbackToLogsOnError). */
  why: string;
  /** When the pod was made (RFC 3339), when the API said. */
  created?: string;
  /** For a pod running but not ready: since when (RFC 3339: its Ready condition's last change, else its container's start). */
  notReadySince?: string;
  /** For a crash loop: the container never ran, its one start failed in the runtime (StartError: runc, cgroups), not in CoreDNS. */
  failedToStartOnce?: boolean;
}

/** The last lines of what a crashed container said (kubernetes keeps them in lastState.terminated.message). */
function lastWords(t: ContainerState['terminated']): string {
  const said = (t?.message ?? '').trim().split('\n').filter(Boolean).slice(-2).join(' / ');
  return [t?.reason, t?.exitCode !== undefined ? `exit ${t.exitCode}` : undefined, said].filter(Boolean).join(', ');
}

/** Every pod of `pods` that is not Running and ready, with why (pods being deleted are left out). */
export function podProblems(pods: readonly PodObject[]): PodProblem[] {
  return pods.flatMap((p): PodProblem[] => {
    if (p.metadata.deletionTimestamp || p.status?.phase === 'Succeeded') return [];
    const base = { name: p.metadata.name, namespace: p.metadata.namespace ?? 'default', node: p.spec?.nodeName ?? '', labels: p.metadata.labels ?? {},
      ...(p.metadata.creationTimestamp ? { created: p.metadata.creationTimestamp } : {}) };
    const statuses = p.status?.containerStatuses ?? [];
    for (const c of statuses) {
      const waiting = c.state?.waiting;
      // A crash loop also between two crashes: running again, not ready, its last run ended in an
      // error. Not a container started again after its node rebooted (last exit Unknown).
      const between = c.restartCount > 0 && !c.ready && c.state?.running !== undefined && c.lastState?.terminated?.reason === 'Error';
      if (waiting?.reason === 'CrashLoopBackOff' || (c.restartCount > 0 && c.lastState?.terminated && !c.ready && !c.state?.running) || between) {
        const once = c.restartCount === 1 && c.lastState?.terminated?.reason === 'StartError';
        const now = waiting?.reason ?? (between ? 'running again, not ready,' : 'restarting');
        return [{ ...base, trouble: 'crash-loop', why: `${now} after ${c.restartCount} restart(s); last exit: ${lastWords(c.lastState?.terminated) || 'unknown'}`,
          ...(once ? { failedToStartOnce: true } : {}) }];
      }
      if (waiting?.reason === 'ErrImagePull' || waiting?.reason === 'ImagePullBackOff' || waiting?.reason === 'ErrImageNeverPull') {
        return [{ ...base, trouble: 'image-pull', why: [waiting.reason, waiting.message].filter(Boolean).join(': ') }];
      }
    }
    if (p.status?.phase === 'Pending') {
      const scheduled = p.status.conditions?.find((c) => c.type === 'PodScheduled');
      if (scheduled?.status === 'False') return [{ ...base, trouble: 'pending', why: [scheduled.reason, scheduled.message].filter(Boolean).join(': ') }];
      const waiting = statuses.map((c) => c.state?.waiting).find((w) => w?.reason);
      return [{ ...base, trouble: 'creating', why: waiting ? [waiting.reason, waiting.message].filter(Boolean).join(': ') : 'ContainerCreating' }];
    }
    const notReady = statuses.find((c) => !c.ready);
    if (p.status?.phase === 'Running' && notReady) {
      const since = p.status.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? notReady.state?.running?.startedAt;
      return [{ ...base, trouble: 'not-ready', why: `container ${notReady.name} is not ready`, ...(since ? { notReadySince: since } : {}) }];
    }
    return [];
  });
}

// Which Kubernetes releases hardway renders files for, and what differs between them. Every
// version-dependent line of templates/ and units/ is decided here, from the minor version, so the
// differences are one table that unit tests read as data.
import { InputError } from '../errors.ts';

/**
 * The Kubernetes releases hardway renders for: 1.20 to 1.32. Golden files (test/golden*) exist for
 * 1.20 (v1.20.2, built from Debian's source package) and 1.32 (the tutorial's v1.32.3); the minors
 * between are rendered by the same rules, whose boundaries are unit-tested.
 */
export const SUPPORTED_KUBERNETES = { major: 1, firstMinor: 20, lastMinor: 32, goldenMinors: [20, 32] } as const;

/** A Kubernetes version as rendering needs it. */
export interface KubernetesVersion {
  /** As written, normalised to vMAJOR.MINOR.PATCH when it parses (e.g. 'v1.20.2'). */
  version: string;
  major: number;
  minor: number;
}

/** The supported range as people write it: '1.20 to 1.32'. */
export function supportedKubernetesRange(): string {
  const s = SUPPORTED_KUBERNETES;
  return `${s.major}.${s.firstMinor} to ${s.major}.${s.lastMinor}`;
}

/**
 * Parses 'v1.32.3', '1.20.2' or a Debian version such as '1.20.5+really1.20.2-1' (the upstream
 * release is the one after "+really"); undefined when it has no major.minor.
 */
export function parseKubernetesVersion(text: string): KubernetesVersion | undefined {
  const really = /\+really(\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1];
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(really ?? text);
  if (!m) return undefined;
  return { version: `v${m[1]}.${m[2]}${m[3] !== undefined ? `.${m[3]}` : ''}`, major: Number(m[1]), minor: Number(m[2]) };
}

/**
 * The version `text` if hardway supports it; otherwise an InputError naming it, where it came from
 * (`from`, e.g. 'downloads/manifest.json') and the supported range.
 */
export function supportedKubernetes(text: string, from: string): KubernetesVersion {
  const v = parseKubernetesVersion(text);
  const s = SUPPORTED_KUBERNETES;
  if (!v || v.major !== s.major || v.minor < s.firstMinor || v.minor > s.lastMinor) {
    throw new InputError(
      `Kubernetes ${JSON.stringify(text)} (from ${from}) is not supported: hardway renders for Kubernetes ${supportedKubernetesRange()}`,
      'use server binaries of a supported release in downloads/ ("hardway download"), or set versions.kubernetes in cluster.yaml to one',
    );
  }
  return v;
}

/** What the rendered files do differently for one Kubernetes minor version. */
export interface KubernetesDifferences {
  /** KubeSchedulerConfiguration's version: v1beta1 up to 1.21, v1beta2 for 1.22-1.24, v1 from 1.25. */
  schedulerConfigVersion: 'v1beta1' | 'v1beta2' | 'v1';
  /**
   * The kubelet reaches containerd through `--container-runtime=remote --container-runtime-endpoint`
   * (before 1.27; 1.27 removed --container-runtime), else through the config field
   * containerRuntimeEndpoint (new in 1.27; older kubelets ignore it: 1.20 then falls back to
   * dockershim and fails with "Cannot connect to the Docker daemon").
   */
  kubeletRuntimeFlags: boolean;
  /** KubeletConfiguration has `registerNode` (from 1.23; the flag's default, true, applies before). */
  kubeletRegisterNodeField: boolean;
}

/** The differences that apply to `v` (a supported version). */
export function kubernetesDifferences(v: Pick<KubernetesVersion, 'minor'>): KubernetesDifferences {
  return {
    schedulerConfigVersion: v.minor >= 25 ? 'v1' : v.minor >= 22 ? 'v1beta2' : 'v1beta1',
    kubeletRuntimeFlags: v.minor < 27,
    kubeletRegisterNodeField: v.minor >= 23,
  };
}

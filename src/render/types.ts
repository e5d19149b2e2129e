// What rendering produces: the files of one machine, each with where it goes and what it affects.

// The step that owns (installs) a rendered file, and the worker components: from the step names.
export type { RenderStep, WorkerComponentName } from '../command-table.ts';
import type { RenderStep } from '../command-table.ts';

/** One file for one machine, exactly as it is installed there. */
export interface RenderedFile {
  /** Absolute path on the machine (from src/layout.ts). */
  path: string;
  content: string;
  mode: number;
  /** The step that owns and installs this file (the component's own step). */
  step: RenderStep;
  /** systemd services that must restart when this file changes, e.g. ['kubelet']. */
  services: string[];
  /**
   * Set when `content` is not a whole file but a marked block to merge into this existing file
   * (with applyMarkedBlock); `path` is then `<mergeInto>.hardway-block`, which is never installed.
   */
  mergeInto?: string;
}

/** The Kubernetes release to render for, and where that was read (named in errors and by `hardway render`). */
export interface KubernetesChoice {
  /** As recorded, e.g. 'v1.20.2'. */
  version: string;
  /** e.g. 'downloads/manifest.json' or 'versions.kubernetes in cluster.yaml'. */
  from: string;
}

/** Per-machine facts that the installing step detects and rendering cannot know. */
export interface RenderOptions {
  /**
   * The Kubernetes release the machines get (see steps/support/kubernetes-version.ts, which reads
   * downloads/); default settings.versions.kubernetes.
   */
  kubernetes?: KubernetesChoice;
  /** Major version of the containerd on the machine; default from settings.versions.containerd. */
  containerdMajor?: number;
  /**
   * Minor version of that containerd (2.1 renamed the CNI `bin_dir` to `bin_dirs`); default from
   * settings.versions.containerd when containerdMajor is not given either, else 0.
   */
  containerdMinor?: number;
  /** The resolver file the kubelet hands to pods; default /etc/resolv.conf. */
  resolvConf?: string;
  /** Where templates/ and units/ are read from; default the package root (tests point elsewhere). */
  templateRoot?: string;
}

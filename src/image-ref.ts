// An image reference as containerd reads it (its reference/docker grammar and normalisation):
// [registry[:port]/]path[:tag][@algorithm:digest]. The first part is a registry only when it has a
// "." or a ":" or is localhost; otherwise it is the first component of the path, which is lower-case
// (so UPPER/case is refused, as containerd refuses it when it pulls). A registry's port is a port
// number. Pure, so cluster.yaml's checks and their tests share it.
import { quote } from './errors.ts';

// A path component (lower-case), a registry's name part, a tag, and a digest.
const PATH_PART = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const REGISTRY_PART = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const TAG = '[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}';
const DIGEST = '[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}';
// Groups: 1 the registry's name, 2 its port, 3 the path.
const REFERENCE = new RegExp(
  `^(?:(${REGISTRY_PART}(?:\\.${REGISTRY_PART})*)(?::([0-9]+))?/)?(${PATH_PART}(?:/${PATH_PART})*)(?::${TAG})?(?:@${DIGEST})?$`,
);
const LOWER_PATH_PART = new RegExp(`^${PATH_PART}$`);

/** The longest reference taken (containerd's limit on a name). */
export const MAX_IMAGE_REF = 255;

/** Why `ref` is not an image reference containerd takes (what is quoted of it cut if long), or undefined when it is one. */
export function imageRefProblem(ref: string): string | undefined {
  if (ref.length > MAX_IMAGE_REF) return `longer than ${MAX_IMAGE_REF} characters`;
  const m = REFERENCE.exec(ref);
  if (m === null) return 'not [registry[:port]/]path[:tag][@algorithm:digest]';
  const [, registry, port] = m;
  if (registry === undefined) return undefined;
  if (port !== undefined) {
    const n = Number(port);
    if (port.length > 5 || n < 1 || n > 65535) return `port ${quote(port)} of registry ${quote(registry)} is not a port number (1 to 65535)`;
    return undefined;
  }
  // Without a "." or a port and not localhost, containerd reads the first part as a path component.
  if (!registry.includes('.') && registry !== 'localhost' && !LOWER_PATH_PART.test(registry)) {
    return `${quote(registry)} is not a registry (no "." or ":port", not localhost), so it starts the repository path, which is lower-case`;
  }
  return undefined;
}

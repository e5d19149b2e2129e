// Test helper: what parseClusterSettings refuses, as the error it throws.
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import type { InputError } from '../../src/errors.ts';

/** The InputError parseClusterSettings throws for `yaml` (a test fails when it is accepted). */
export function refusedSettings(yaml: string): InputError {
  try {
    parseClusterSettings(yaml, 'cluster.yaml');
  } catch (e) {
    return e as InputError;
  }
  throw new Error(`accepted:\n${yaml}`);
}

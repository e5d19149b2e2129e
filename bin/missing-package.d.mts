// Types for missing-package.mjs (plain JavaScript: the entry point must run before tsx is loaded).
/** The "run npm ci" message for an error naming a missing npm package, or undefined for any other error. */
export function missingPackageMessage(error: unknown, root: string): string | undefined;

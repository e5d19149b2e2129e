// Types for source-stamp.mjs (plain JavaScript: the entry point must run before tsx is loaded).
/** SHA-256 over the relative path and content of each file under ROOT/src. */
export function sourceStamp(root: string): string;
/** True if ROOT/dist/cli holds a bundle built from ROOT/src exactly as it is now. */
export function bundleIsCurrent(root: string): boolean;

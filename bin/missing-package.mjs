// What to tell a user whose checkout has no (or an incomplete) node_modules/: run npm ci. Plain
// JavaScript: the entry point needs it before tsx or any package can be loaded (src/cli.ts uses it
// too, for a package missing when a command loads; the bundle carries a copy: npm run build).

/**
 * The message for an error that says an npm package could not be found (ERR_MODULE_NOT_FOUND
 * naming a package, not a file of hardway's own), or undefined for any other error.
 */
export function missingPackageMessage(error, root) {
  const code = error?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const pkg = /Cannot find (?:package|module) '([^'./][^']*)'/.exec(String(error?.message ?? ''))?.[1];
  if (!pkg) return undefined;
  return `error: hardway's npm packages are not installed: "${pkg}" is missing from ${root}node_modules/\n` +
    `  hint: run "npm ci" in ${root} (it installs exactly what package-lock.json names), then run hardway again`;
}

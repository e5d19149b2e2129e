// Credentials in URLs: hardway sends none with a download or to a mirror, so a URL that carries a
// user name or password (https://user:token@host/...) is refused where it is read, and wherever a
// URL may reach output (an error, a log line, the support bundle) its credentials are masked.

/** Whether `url` has a user name or password before its host (scheme://USER[:PASSWORD]@host). */
export function hasCredentials(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]*@/i.test(url);
}

/** `text` with the credentials of every URL in it replaced by `***` (https://***@host/...). */
export function maskCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/?#\s"'<>]*@/gi, '$1***@');
}

/** The refusal's hint, for every URL setting alike. */
export const CREDENTIALS_HINT =
  'hardway sends no user name or password with a URL: serve the file or mirror without them (for dns.source, or copy the file beside cluster.yaml ' +
  'and give its path), and change that password, since it was written in cluster.yaml';

// The machine's routing table as data: the routes step changes it, verify checks it.

/** A route as `ip -4 route show` lists it. */
export interface LiveRoute {
  dst: string;
  via?: string;
}

/** Parses `ip -4 route show` output. */
export function parseRoutes(text: string): LiveRoute[] {
  return text.split('\n').filter(Boolean).map((line) => {
    const words = line.trim().split(/\s+/);
    const via = words.indexOf('via');
    return { dst: words[0]!, ...(via > 0 ? { via: words[via + 1] } : {}) };
  });
}

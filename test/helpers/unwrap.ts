// Error messages as hardway printed them before wrapping, for tests that run the real binary (its
// stderr a pipe, so wrapped at 80 columns) and compare a message whole.

/**
 * Joins the lines src/ui/wrap.ts wrapMessage broke: a line with the hanging indent (2 spaces under
 * `error: `, 8 under `hint: `) whose first word (or whole command line) would not have fitted on
 * the line before, at `width`.
 */
export function unwrapErrors(text: string, width = 80): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const prev = out.at(-1);
    const hang = /^( {2}| {8})(?! )(?!hint: )(\S+)/.exec(line);
    // A command line was moved whole (src/ui/wrap.ts keeps it unbroken): it is the word that did not fit.
    const word = /^(sudo )?hardway /.test(line.trimStart()) ? line.trimStart() : hang?.[2] ?? '';
    // A line that ends with a command to copy ended its line before wrapping too.
    const endsWithCommand = prev !== undefined && (/^ {8}(sudo )?hardway \S/.test(prev) || /: (sudo )?hardway \S[^:]*$/.test(prev));
    if (prev !== undefined && hang && !endsWithCommand && prev.length + 1 + word.length > width && /^(error: | {2}hint: | {2}\S| {8}\S)/.test(prev)) out[out.length - 1] = `${prev} ${line.trimStart()}`;
    else out.push(line);
  }
  return out.join('\n');
}

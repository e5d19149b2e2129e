// Editing one block that hardway owns inside a file it does not own (/etc/hosts, cloud-init's
// hosts template): the block sits between a begin and an end marker line and is replaced as a
// whole, never appended twice. Pure text in, text out, so the rules are testable without a machine.

/** The two lines that delimit the owned block. */
export interface BlockMarkers {
  begin: string;
  end: string;
}

/**
 * Puts `block` (which starts with the begin marker line and ends with the end marker line) into
 * `text`: replaces the first marked region in place, drops any further regions and stray marker
 * lines left by hand edits, or appends the block once when there is none. Idempotent.
 */
export function applyMarkedBlock(text: string, block: string, markers: BlockMarkers): string {
  const blockLines = checkBlock(block, markers);
  const { kept, firstRegion } = outsideBlocks(splitLines(text), markers);
  const at = firstRegion ?? kept.length;
  return [...kept.slice(0, at), ...blockLines, ...kept.slice(at)].map((l) => l + '\n').join('');
}

/**
 * The lines outside every marked region, without stray marker lines, and where (as an index into
 * them) the first region was. Only a begin marker with a later end marker opens a region; a lone
 * marker line is dropped but the lines around it are kept, because hardway cannot tell which of them it wrote.
 */
function outsideBlocks(lines: string[], markers: BlockMarkers): { kept: string[]; firstRegion?: number } {
  const kept: string[] = [];
  let firstRegion: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const kind = markerKind(lines[i]!, markers);
    if (kind === undefined) {
      kept.push(lines[i]!);
      continue;
    }
    const end = kind === 'begin' ? findEnd(lines, i + 1, markers) : -1;
    if (end >= 0) {
      firstRegion ??= kept.length;
      i = end;
    }
  }
  return { kept, firstRegion };
}

/** Whether `text` already holds exactly `block` once and no other marker lines (nothing to do). */
export function hasMarkedBlock(text: string, block: string, markers: BlockMarkers): boolean {
  return applyMarkedBlock(text, block, markers) === text;
}

function checkBlock(block: string, markers: BlockMarkers): string[] {
  const lines = splitLines(block);
  const kinds = lines.map((l) => markerKind(l, markers));
  const ok =
    lines.length >= 2 &&
    kinds[0] === 'begin' &&
    kinds[lines.length - 1] === 'end' &&
    kinds.slice(1, -1).every((k) => k === undefined);
  // A malformed block is a bug in hardway, not in the user's file.
  if (!ok) throw new Error('marked block must start with the begin marker, end with the end marker, and hold no other marker line');
  return lines;
}

/** Lines without their terminators; a final newline does not make an extra empty line. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function markerKind(line: string, markers: BlockMarkers): 'begin' | 'end' | undefined {
  // Trailing blanks or a CR from an editor must not hide a marker (it would then be duplicated).
  const bare = line.trimEnd();
  if (bare === markers.begin) return 'begin';
  if (bare === markers.end) return 'end';
  return undefined;
}

function findEnd(lines: string[], from: number, markers: BlockMarkers): number {
  for (let j = from; j < lines.length; j++) {
    const kind = markerKind(lines[j]!, markers);
    if (kind === 'end') return j;
    if (kind === 'begin') return -1;
  }
  return -1;
}

/**
 * Takes hardway's block out of `text` (reset): every marked region and stray marker line goes, every
 * other line stays where it was, so a file pin-hosts only added its block to is as it was before.
 */
export function removeMarkedBlock(text: string, markers: BlockMarkers): string {
  return outsideBlocks(splitLines(text), markers).kept.map((l) => l + '\n').join('');
}

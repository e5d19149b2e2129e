import { describe, expect, it } from 'vitest';
import { applyMarkedBlock, hasMarkedBlock } from '../../src/render/marked-block.ts';

const M = { begin: '# BEGIN test block', end: '# END test block' };
const block = (...lines: string[]) => [M.begin, ...lines, M.end].map((l) => l + '\n').join('');
const NEW = block('10.0.0.1 a.example a', '10.0.0.2 b.example b');
const OLD = block('10.9.9.9 old.example old');

describe('applyMarkedBlock', () => {
  it('appends the block to a file without one, adding the missing final newline first', () => {
    expect(applyMarkedBlock('127.0.0.1 localhost\n', NEW, M)).toBe('127.0.0.1 localhost\n' + NEW);
    expect(applyMarkedBlock('127.0.0.1 localhost', NEW, M)).toBe('127.0.0.1 localhost\n' + NEW);
    expect(applyMarkedBlock('', NEW, M)).toBe(NEW);
  });

  it('replaces an existing block in place, keeping the lines before and after', () => {
    const text = 'first\n' + OLD + 'last\n';
    expect(applyMarkedBlock(text, NEW, M)).toBe('first\n' + NEW + 'last\n');
  });

  it('collapses duplicated blocks (hand edits, the manual >> append) into one at the first place', () => {
    const text = 'a\n' + OLD + 'b\n' + OLD + 'c\n' + NEW;
    expect(applyMarkedBlock(text, NEW, M)).toBe('a\n' + NEW + 'b\nc\n');
  });

  it('drops a stray begin or end marker line but keeps the lines next to it', () => {
    expect(applyMarkedBlock(`x\n${M.begin}\nkept\n`, NEW, M)).toBe('x\nkept\n' + NEW);
    expect(applyMarkedBlock(`x\n${M.end}\nkept\n`, NEW, M)).toBe('x\nkept\n' + NEW);
    // begin, begin, end: the first begin is stray, the second pair is the region.
    expect(applyMarkedBlock(`${M.begin}\nkeep\n${M.begin}\nold\n${M.end}\n`, NEW, M)).toBe('keep\n' + NEW);
  });

  it('recognises markers with trailing blanks or a CR, so they are not duplicated', () => {
    expect(applyMarkedBlock(`a\n${M.begin}  \nold\n${M.end}\r\nz\n`, NEW, M)).toBe('a\n' + NEW + 'z\n');
  });

  it('is idempotent and reports a converged file as such', () => {
    const once = applyMarkedBlock('127.0.0.1 localhost\n' + OLD, NEW, M);
    expect(applyMarkedBlock(once, NEW, M)).toBe(once);
    expect(hasMarkedBlock(once, NEW, M)).toBe(true);
    expect(hasMarkedBlock('127.0.0.1 localhost\n' + OLD, NEW, M)).toBe(false);
  });

  it('refuses a block without its markers (a bug in the caller)', () => {
    expect(() => applyMarkedBlock('x\n', 'no markers\n', M)).toThrow(/begin marker/);
    expect(() => applyMarkedBlock('x\n', block(M.end, 'y'), M)).toThrow(/no other marker/);
  });
});

describe('applyMarkedBlock over generated files', () => {
  // A small deterministic PRNG so a failure is reproducible from the printed seed.
  const rng = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const PIECES = ['127.0.0.1 localhost', '', '# a comment', '::1 ip6-localhost', '  indented', M.begin, M.end, OLD.trimEnd(), NEW.trimEnd(), 'x\r'];

  function generate(r: () => number): string {
    const n = Math.floor(r() * 9);
    const lines = Array.from({ length: n }, () => PIECES[Math.floor(r() * PIECES.length)]!);
    const text = lines.join('\n');
    return r() < 0.5 && text !== '' ? text + '\n' : text;
  }

  const count = (text: string, line: string) => text.split('\n').filter((l) => l.trimEnd() === line).length;

  it('always leaves exactly one copy of the block, is idempotent, and keeps unmarked lines in order', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const text = generate(rng(seed));
      const out = applyMarkedBlock(text, NEW, M);
      const ctx = `seed ${seed}: ${JSON.stringify(text)}`;
      expect(applyMarkedBlock(out, NEW, M), ctx).toBe(out);
      expect(count(out, M.begin), ctx).toBe(1);
      expect(count(out, M.end), ctx).toBe(1);
      expect(out.split(NEW).length - 1, ctx).toBe(1);
      expect(out.endsWith('\n'), ctx).toBe(true);
      // Lines that were outside any region and are not markers survive, in order.
      const outside = (t: string) => {
        const kept: string[] = [];
        const lines = t.split('\n');
        for (let i = 0; i < lines.length; i++) {
          const l = lines[i]!;
          if (l.trimEnd() === M.begin) {
            const end = lines.findIndex((x, j) => j > i && (x.trimEnd() === M.end || x.trimEnd() === M.begin));
            if (end > i && lines[end]!.trimEnd() === M.end) i = end;
            continue;
          }
          if (l.trimEnd() !== M.end && l !== '') kept.push(l);
        }
        return kept;
      };
      expect(outside(out), ctx).toEqual(outside(text));
    }
  });

  it('appends at the end exactly when the file had no complete region', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const text = generate(rng(seed)).split('\n').filter((l) => l.trimEnd() !== M.begin && l.trimEnd() !== M.end && !l.includes('BEGIN')).join('\n');
      const out = applyMarkedBlock(text, NEW, M);
      const base = text === '' || text.endsWith('\n') ? text : text + '\n';
      expect(out, `seed ${seed}`).toBe(base + NEW);
    }
  });
});

// src/errors.ts's firstLine, the one helper that turns an error into the line logs and answers show:
// DuckDB and Node append reader settings, SQL or stacks after the first line.
import { describe, expect, it } from 'vitest';
import { firstLine } from '../../src/errors.js';

describe('firstLine', () => {
  it('keeps the first line of a message, trimmed, and of anything thrown that is not an Error', () => {
    expect(firstLine(new Error('  IO Error: cannot open file  \nLINE 1: select ...\n  at x'))).toBe(
      'IO Error: cannot open file',
    );
    expect(firstLine('plain text\nmore')).toBe('plain text');
    expect(firstLine(42)).toBe('42');
    expect(firstLine(new Error(''))).toBe('');
  });

  it('cuts at 300 characters by default, at the length asked for, and not at all when told so', () => {
    const long = new Error(`${'x'.repeat(500)}\nsecond line`);
    expect(firstLine(long)).toBe('x'.repeat(300));
    expect(firstLine(long, 10)).toBe('x'.repeat(10));
    expect(firstLine(long, Number.POSITIVE_INFINITY)).toBe('x'.repeat(500));
  });
});

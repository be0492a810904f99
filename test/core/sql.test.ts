import { describe, expect, it } from 'vitest';
import { paramsFor, quoteIdent, quoteLiteral, splitStatements, stripComments } from '../../src/db/sql.js';

describe('SQL text helpers', () => {
  it('strips comments but not dashes or dollars inside quoted text', () => {
    const sql = 'select \'/tmp/a--b\' as p, "x--y" -- a $comment\nfrom t where q = $value';
    expect(stripComments(sql)).toBe('select \'/tmp/a--b\' as p, "x--y" \nfrom t where q = $value');
    expect(paramsFor(stripComments(sql), { value: 1, comment: 2 })).toEqual({ value: 1 });
    expect(paramsFor("select 'costs $5' as price")).toBeUndefined();
  });

  it('names a parameter without a value instead of sending the query', () => {
    expect(() => paramsFor('select $missing')).toThrow(/\$missing has no value/);
  });

  it('quotes identifiers and literals so a quote cannot end them', () => {
    expect(quoteIdent('we"ird')).toBe('"we""ird"');
    expect(quoteLiteral("it's")).toBe("'it''s'");
    expect(splitStatements('a;\nb; -- c\n')).toEqual(['a', 'b']);
  });
});

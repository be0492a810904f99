// The serving pack writes its payloads as DuckDB's own UTF-8 bytes, read from the vectors' string
// entries (src/db/vector-read.ts): checked here against the client's `getItem` strings encoded,
// over several chunks, with NULLs, empty text, text inline (up to 12 bytes) and behind a pointer,
// and 2-, 3- and 4-byte characters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBInstance } from '../../src/db/duckdb.js';
import { textBytes } from '../../src/db/vector-read.js';

let instance: DuckDBInstance;
let conn: DuckDBConnection;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
});

// 5,000 rows, three chunks of 2,048: every 7th NULL; 0-40 characters, some ending in 'Zürich €😀'
const TEXTS = `
  select case when i % 7 = 0 then null
              else repeat(chr((97 + i % 26)::integer), (i % 41)::integer) || case when i % 5 = 0 then 'Zürich €😀' else '' end end as t
  from range(5000) as r(i)`;

describe('textBytes', () => {
  it('gives each value as the UTF-8 bytes of the string the client reads, and null for NULL', async () => {
    const result = await conn.run(TEXTS);
    let rows = 0;
    let inline = 0;
    let long = 0;
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const vector = chunk.getColumnVector(0);
      const bytes = textBytes(vector, chunk.rowCount);
      expect(bytes).toHaveLength(chunk.rowCount);
      for (let i = 0; i < chunk.rowCount; i++) {
        const value = vector.getItem(i) as string | null;
        if (value === null) expect(bytes[i]).toBeNull();
        else {
          expect(bytes[i]?.equals(Buffer.from(value, 'utf8')), `row ${rows + i}: ${value}`).toBe(true);
          if (Buffer.byteLength(value) <= 12) inline++;
          else long++;
        }
      }
      rows += chunk.rowCount;
    }
    expect(rows).toBe(5000);
    // both kinds of string entry were read
    expect(inline).toBeGreaterThan(500);
    expect(long).toBeGreaterThan(2000);
  });
});

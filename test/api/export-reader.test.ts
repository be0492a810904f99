// The bulk export's DuckDB cache is bounded by design: it reads through its own read-only instance
// on the slot's file, capped at DRIVING_API_EXPORT_MEMORY_LIMIT. A scan of a table several times
// the cap leaves at most the cap cached there (DuckDB's own accounting, duckdb_memory()), where an
// instance with the API's cap keeps every block it read; and the file's read lock stays held until
// the snapshot closes both instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../../src/db/duckdb.js';
import { ExportReader } from '../../src/api/export/export-reader.js';
import { sqlText } from '../../src/db/sql.js';

const MiB = 2 ** 20;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dds-export-reader-'));
  file = join(dir, 'slot.duckdb');
  const writer = await DuckDBInstance.create(file);
  const conn = await writer.connect();
  // random doubles hardly compress: about 48 MB of table blocks, six times the cap below
  await conn.run('create table t as select random() as a, random() as b, random() as c from range(2000000)');
  conn.closeSync();
  writer.closeSync();
});
afterAll(() => {
  delete process.env['DRIVING_API_EXPORT_MEMORY_LIMIT'];
  rmSync(dir, { recursive: true, force: true });
});

// integer sums: exact whatever the threads' order (a float sum is not); min/max come from statistics
const SCAN =
  'select count(*) as n, sum((a * 1e9)::bigint) as a, sum((b * 1e9)::bigint) as b, sum((c * 1e9)::bigint) as c from t';
const cachedBytes = async (q: (sql: string) => Promise<Record<string, unknown>[]>) =>
  Number((await q(sqlText('ops/api/duckdb_memory')))[0]?.['table_bytes'] ?? 0);

describe('ExportReader', () => {
  it('keeps at most its cap of table blocks cached over a scan six times as large, where the API cap keeps them all', async () => {
    process.env['DRIVING_API_EXPORT_MEMORY_LIMIT'] = '8MB';
    const reader = new ExportReader(file);
    const wide = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', memory_limit: '1GB' });
    const wideConn = await wide.connect();
    const wideQuery = async (sql: string) =>
      (await wideConn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
    try {
      const [limit] = await reader.query("select current_setting('memory_limit') as m");
      expect(limit?.['m']).toMatch(/^7\.\d MiB$/); // 8 MB
      // the same scan, twice over, on both: the same answer
      for (let i = 0; i < 2; i++) expect(await reader.query(SCAN)).toEqual(await wideQuery(SCAN));
      expect(await cachedBytes((sql) => reader.query(sql))).toBeLessThanOrEqual(8e6);
      expect(await cachedBytes(wideQuery)).toBeGreaterThan(40 * MiB);
    } finally {
      wideConn.closeSync();
      wide.closeSync();
      reader.close();
    }
  });

  it('is opened at its first query only, and refuses queries once closed', async () => {
    delete process.env['DRIVING_API_EXPORT_MEMORY_LIMIT'];
    const unopened = new ExportReader(join(dir, 'missing.duckdb'));
    unopened.close(); // never opened: nothing to close, no file needed
    const reader = new ExportReader(file);
    const [limit] = await reader.query("select current_setting('memory_limit') as m");
    expect(limit?.['m']).toMatch(/^30\.\d MiB$/); // the default, 32 MB
    reader.close();
    await expect(reader.query('select 1')).rejects.toThrow(/closed/);
  });
});

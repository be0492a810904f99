import { getHeapSpaceStatistics } from 'node:v8';
import { sqlText, type Params, type Row } from '../../db/sql.js';
import { setting } from '../../settings.js';

/** What the log asks DuckDB's memory of: the snapshot's instance and the export's. */
interface Queryable {
  query(sql: string, params?: Params): Promise<Row[]>;
}

/**
 * With DRIVING_API_EXPORT_MEMORY_LOG set, one JSON line a batch to stderr: the process's memory
 * (rss, V8 heap, external, array buffers) and the buffer managers' of DuckDB (the export's instance and the snapshot's), so a long export's
 * growth can be split into its parts. Off by default: the DuckDB query costs a round trip a batch.
 */
export const memoryLogOn = (): boolean => setting('DRIVING_API_EXPORT_MEMORY_LOG');

/** Passes the batches through, logging after each one was taken by the consumer. */
export async function* withMemoryLog<T extends { length: number }>(
  batches: AsyncIterable<T>,
  readers: { snapshot: Queryable; export: Queryable },
  label: string,
): AsyncGenerator<T> {
  const mib = (n: number) => Math.round(n / 2 ** 20);
  let batch = 0;
  let rows = 0;
  for await (const b of batches) {
    yield b;
    batch++;
    rows += b.length;
    const [db] = await readers.export.query(sqlText('ops/api/duckdb_memory'));
    const [main] = await readers.snapshot.query(sqlText('ops/api/duckdb_memory'));
    const m = process.memoryUsage();
    // V8's spaces (young generation, old, large objects...) as committed: which part of the heap a peak is
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics().map((sp) => [sp.space_name.replace(/_space$/, ''), mib(sp.physical_space_size)]),
    );
    process.stderr.write(
      `${JSON.stringify({
        export: label,
        batch,
        rows,
        rssMiB: mib(m.rss),
        heapUsedMiB: mib(m.heapUsed),
        heapTotalMiB: mib(m.heapTotal),
        externalMiB: mib(m.external),
        arrayBuffersMiB: mib(m.arrayBuffers),
        heapSpacesMiB: spaces,
        exportDuckdbMiB: mib(Number(db?.['total_bytes'] ?? 0)),
        exportDuckdbLimit: db?.['memory_limit'],
        snapshotDuckdbMiB: mib(Number(main?.['total_bytes'] ?? 0)),
        snapshotDuckdbLimit: main?.['memory_limit'],
      })}\n`,
    );
  }
}

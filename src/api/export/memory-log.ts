import { sqlText } from '../../db/sql.js';
import type { ExportSource } from './trip-windows.js';

/**
 * With DRIVING_API_EXPORT_MEMORY_LOG set, one JSON line a batch to stderr: the process's memory
 * (rss, V8 heap, external, array buffers) and the buffer managers' of DuckDB (the export's instance and the snapshot's), so a long export's
 * growth can be split into its parts. Off by default: the DuckDB query costs a round trip a batch.
 */
export const memoryLogOn = (): boolean => Boolean(process.env['DRIVING_API_EXPORT_MEMORY_LOG']);

/** Passes the batches through, logging after each one was taken by the consumer. */
export async function* withMemoryLog<T extends unknown[]>(batches: AsyncIterable<T>, readers: { snapshot: ExportSource; export: ExportSource }, label: string): AsyncGenerator<T> {
  const mib = (n: number) => Math.round(n / 2 ** 20);
  let batch = 0;
  let rows = 0;
  for await (const b of batches) {
    yield b;
    batch++;
    rows += b.length;
    const [db] = await readers.export.query(sqlText('api/duckdb_memory'));
    const [main] = await readers.snapshot.query(sqlText('api/duckdb_memory'));
    const m = process.memoryUsage();
    process.stderr.write(`${JSON.stringify({
      export: label, batch, rows, rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), heapTotalMiB: mib(m.heapTotal),
      externalMiB: mib(m.external), arrayBuffersMiB: mib(m.arrayBuffers),
      exportDuckdbMiB: mib(Number(db?.['total_bytes'] ?? 0)), exportDuckdbLimit: db?.['memory_limit'],
      snapshotDuckdbMiB: mib(Number(main?.['total_bytes'] ?? 0)), snapshotDuckdbLimit: main?.['memory_limit'],
    })}\n`);
  }
}

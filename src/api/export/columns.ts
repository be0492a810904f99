import type { DuckDBDataChunk, DuckDBResult, DuckDBVector } from '@duckdb/node-api';
import { DuckDBTypeId } from '../../db/duckdb.js';
import { pointedBytes, stringEntries, validRows, vectorData } from '../../db/vector-read.js';

type Column = (string | null)[] | Float64Array | boolean[];

/**
 * A query's result as one array per column, read from DuckDB's chunks: no object per row. The
 * bulk export builds its Arrow and NDJSON straight from these, so a batch of 1,000 trips and
 * their events holds a few dozen arrays and the strings, not some 10 objects per trip.
 *
 * Text stays text (null where SQL NULL); booleans are booleans; numbers are a Float64Array with
 * NULL as 0, which is what the served values make of a missing number (`Number(null)`,
 * `round(null)`, `point(null, null)`); BIGINTs (ids, meters, seconds) are within 2^53.
 */
export class Columns {
  private constructor(
    readonly rowCount: number,
    private readonly byName: Map<string, Column>,
  ) {}

  /**
   * The result's columns. Its chunks are fetched first (the result is materialised in DuckDB
   * already), so each column is allocated once at its size, not grown value by value.
   */
  static async read(result: DuckDBResult): Promise<Columns> {
    const names = result.columnNames();
    const kinds = result.columnTypes().map((t) => kindOf(t.typeId));
    const chunks: DuckDBDataChunk[] = [];
    let rowCount = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      chunks.push(chunk);
      rowCount += chunk.rowCount;
    }
    const columns = kinds.map((kind) =>
      kind === 'number' ? new Float64Array(rowCount) : new Array<string | boolean | null>(rowCount),
    );
    let at = 0;
    for (const chunk of chunks) {
      for (let c = 0; c < names.length; c++)
        readVector(chunk.getColumnVector(c), kinds[c] as Kind, chunk.rowCount, columns[c] as Column, at);
      at += chunk.rowCount;
    }
    return new Columns(rowCount, new Map(names.map((name, c) => [name, columns[c] as Column])));
  }

  /** Parts of one batch (each window's rows) as one. */
  static concat(parts: Columns[]): Columns {
    if (parts.length === 1) return parts[0] as Columns;
    const first = parts[0];
    if (!first) return new Columns(0, new Map());
    const rowCount = parts.reduce((n, p) => n + p.rowCount, 0);
    const byName = new Map<string, Column>();
    for (const [name, column] of first.byName) {
      const all = parts.map((p) => p.byName.get(name) as Column);
      if (column instanceof Float64Array) {
        const joined = new Float64Array(rowCount);
        let at = 0;
        for (const part of all as Float64Array[]) {
          joined.set(part, at);
          at += part.length;
        }
        byName.set(name, joined);
      } else byName.set(name, (all as unknown[][]).flat() as Column);
    }
    return new Columns(rowCount, byName);
  }

  text(name: string): (string | null)[] {
    return this.column(name) as (string | null)[];
  }

  number(name: string): Float64Array {
    return this.column(name) as Float64Array;
  }

  flag(name: string): boolean[] {
    return this.column(name) as boolean[];
  }

  private column(name: string): Column {
    const column = this.byName.get(name);
    if (!column) throw new Error(`the export's query has no column ${name}`);
    return column;
  }
}

type Kind = 'text' | 'number' | 'flag';

const decoder = new TextDecoder();

function readVector(vector: DuckDBVector, kind: Kind, n: number, out: Column, at: number): void {
  // the vector's own fields (src/db/vector-read.ts): getItem's BigInt validity test and its string
  // read made most of a batch's garbage, so V8 promoted each batch's values into the old generation
  const data = vectorData(vector);
  const strings = kind === 'text' ? stringEntries(vector, n) : null;
  if (kind === 'number' && data.items && data.validity) {
    const { items } = data;
    const valid = validRows(data);
    const numbers = out as Float64Array;
    for (let i = 0; i < n; i++) numbers[at + i] = valid(i) ? Number(items[i]) : 0;
  } else if (strings) {
    // a short string is decoded from the entries in place, with no view of its own
    const { entries, view, valid } = strings;
    const texts = out as (string | null)[];
    for (let i = 0; i < n; i++) texts[at + i] = valid(i) ? textAt(entries, view, i * 16) : null;
  } else {
    for (let i = 0; i < n; i++) {
      const value = vector.getItem(i);
      if (kind === 'number') (out as Float64Array)[at + i] = value === null ? 0 : Number(value);
      else (out as unknown[])[at + i] = value;
    }
  }
}

/** DuckDB's string entry at `offset`: its length, then the bytes inline (up to 12) or a pointer to them. */
function textAt(entries: Buffer, view: DataView, offset: number): string {
  const length = view.getUint32(offset, true);
  if (length <= 12) return entries.toString('utf8', offset + 4, offset + 4 + length);
  return decoder.decode(pointedBytes(view, offset, length));
}

function kindOf(typeId: DuckDBTypeId): Kind {
  switch (typeId) {
    case DuckDBTypeId.VARCHAR:
      return 'text';
    case DuckDBTypeId.BOOLEAN:
      return 'flag';
    case DuckDBTypeId.DOUBLE:
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.HUGEINT:
      return 'number';
    default:
      throw new Error(`the export reads no column of DuckDB type ${DuckDBTypeId[typeId]}`);
  }
}

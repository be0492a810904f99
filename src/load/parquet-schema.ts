import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { DuckDBTypeId } from '../db/duckdb.js';
import { paramsFor, sqlText, stripComments } from '../db/sql.js';

/** A Parquet file whose columns are not the record format's: it cannot be staged, and says why. */
export class ParquetColumnsError extends Error {}

/** The shape the staging view reads a column as: any scalar, a list of a shape, a struct of named shapes. */
type Shape = 'scalar' | { list: Shape } | { struct: Record<string, Shape> };

const POSITION: Shape = { struct: { lat: 'scalar', lng: 'scalar' } };
const POINTS: Shape = { list: { struct: { t: 'scalar', lat: 'scalar', lng: 'scalar', speed: 'scalar' } } };
const EVENTS: Shape = {
  list: {
    struct: {
      type: 'scalar',
      startTime: 'scalar',
      endTime: 'scalar',
      startPoint: POSITION,
      endPoint: POSITION,
      description: 'scalar',
    },
  },
};
/**
 * Every field of a record is a column of the file (NULL where a record has none): the staging view
 * (sql/models/staging/stg_trip_records_parquet.sql) reads each. A scalar column of any type is
 * read, and its values judged by the record rules.
 */
const COLUMNS: Record<string, Shape> = {
  appId: 'scalar',
  platformUserId: 'scalar',
  orgUserId: 'scalar',
  tripId: 'scalar',
  deviceId: 'scalar',
  os: 'scalar',
  coordinate: 'scalar',
  isAutoStart: 'scalar',
  isAutoEnd: 'scalar',
  startTime: 'scalar',
  endTime: 'scalar',
  startPoi: 'scalar',
  endPoi: 'scalar',
  points: POINTS,
  events: EVENTS,
};

/**
 * Checks a Parquet file's columns against the record format (docs/record-format.md, Files) before
 * it is staged, so a wrong file is set aside with a reason that names each missing or mistyped
 * column and what the format expects, not DuckDB's binder message about a view.
 * @example await assertRecordColumns(conn, '/in/day.parquet') // throws ParquetColumnsError('not a trip-record Parquet file: missing column(s) os (...); points is VARCHAR, expected ...')
 */
export async function assertRecordColumns(conn: DuckDBConnection, path: string): Promise<void> {
  const text = stripComments(sqlText('ops/load/parquet_columns'));
  const reader = await conn.runAndReadAll(text, paramsFor(text, { path }));
  const columnTypes = reader.columnTypes();
  // DuckDB binds names case-insensitively, the view's `src.appId` an `appid` column too
  const types = new Map(reader.columnNames().map((name, i) => [name.toLowerCase(), columnTypes[i] as DuckDBType]));
  const missing: string[] = [];
  const problems: string[] = [];
  for (const [column, shape] of Object.entries(COLUMNS)) {
    const type = types.get(column.toLowerCase());
    if (!type) missing.push(column);
    else {
      const wrong = shapeProblems(type, shape, column);
      if (wrong.length > 0) problems.push(`${wrong.join(', ')}, expected ${describe(shape)}`);
    }
  }
  if (missing.length > 0)
    problems.unshift(`missing column(s) ${missing.join(', ')} (each field of a record is a column, NULL where absent)`);
  // said whole within the 300 characters a failed file's reason keeps
  if (problems.length > 0) throw new ParquetColumnsError(`not a trip-record Parquet file: ${problems.join('; ')}`);
}

/** Where `type` differs from `shape`, each named by its path (`points[].lat is a STRUCT`). */
function shapeProblems(type: DuckDBType, shape: Shape, path: string): string[] {
  if (shape === 'scalar') return NESTED.has(type.typeId) ? [`${path} is ${kindOf(type)}`] : [];
  if ('list' in shape) {
    if (type.typeId !== DuckDBTypeId.LIST && type.typeId !== DuckDBTypeId.ARRAY) return [`${path} is ${kindOf(type)}`];
    return shapeProblems((type as DuckDBType & { valueType: DuckDBType }).valueType, shape.list, `${path}[]`);
  }
  if (type.typeId !== DuckDBTypeId.STRUCT) return [`${path} is ${kindOf(type)}`];
  const struct = type as DuckDBType & { entryNames: readonly string[]; entryTypes: readonly DuckDBType[] };
  const entries = new Map(struct.entryNames.map((name, i) => [name.toLowerCase(), struct.entryTypes[i] as DuckDBType]));
  const fields = Object.entries(shape.struct);
  const lacking = fields.filter(([name]) => !entries.has(name.toLowerCase())).map(([name]) => name);
  return [
    ...(lacking.length > 0 ? [`${path} has no ${lacking.join(', ')}`] : []),
    ...fields.flatMap(([name, inner]) => {
      const entry = entries.get(name.toLowerCase());
      return entry ? shapeProblems(entry, inner, `${path}.${name}`) : [];
    }),
  ];
}

/** A shape as the reason names it: `a list of {t, lat, ...}`. */
function describe(shape: Shape): string {
  if (shape === 'scalar') return 'a scalar';
  if ('list' in shape) return `a list of ${describe(shape.list)}`;
  const fields = Object.entries(shape.struct).map(([name, inner]) =>
    inner === 'scalar' ? name : `${name} ${describe(inner)}`,
  );
  return `{${fields.join(', ')}}`;
}

/** A type as the reason names it, short: a scalar by its name, a nested one by its kind. */
function kindOf(type: DuckDBType): string {
  if (type.typeId === DuckDBTypeId.LIST || type.typeId === DuckDBTypeId.ARRAY) return 'a list';
  if (type.typeId === DuckDBTypeId.STRUCT) return 'a STRUCT';
  if (type.typeId === DuckDBTypeId.MAP) return 'a MAP';
  if (type.typeId === DuckDBTypeId.UNION) return 'a UNION';
  return String(type);
}

const NESTED = new Set<number>([
  DuckDBTypeId.LIST,
  DuckDBTypeId.ARRAY,
  DuckDBTypeId.STRUCT,
  DuckDBTypeId.MAP,
  DuckDBTypeId.UNION,
]);

/**
 * The COPY options of every raw-points Parquet file (the load, re-derivation, a purge's rewrite).
 * Parquet format version 2 (DuckDB's delta and byte-stream-split encodings): on a day file's points
 * it writes fewer bytes in less time than version 1, and DuckDB reads them back faster. Files
 * written as version 1 before stay readable beside them.
 */
export const POINTS_PARQUET = 'format parquet, compression zstd, parquet_version v2';

import { createRequire } from 'node:module';
import type * as Api from '@duckdb/node-api';
import type * as Bindings from '@duckdb/node-bindings';
import { loadVendored } from '../vendor.js';

// The runtime values of DuckDB's Node client, loaded with require(). @duckdb/node-api is CommonJS:
// importing it from an ES module makes Node's loader lex each of its files for their exports, a
// cost paid at every job's and the API's start; require() loads the same module without that,
// and from the build's one-file bundle of it, with its V8 code cache (src/vendor.ts), faster still.
// Types still come from `import type ... from '@duckdb/node-api'`.
const require = createRequire(import.meta.url);
const api = loadVendored<typeof Api>('@duckdb/node-api') ?? (require('@duckdb/node-api') as typeof Api);

export const { DuckDBInstance, DuckDBResultReader, DuckDBTypeId, listValue } = api;
export type DuckDBInstance = Api.DuckDBInstance;
export type DuckDBTypeId = Api.DuckDBTypeId;

/** The bytes behind a pointer in DuckDB's memory (a long string's): what the client's own string reads call. */
export const getDataFromPointer = (
  createRequire(require.resolve('@duckdb/node-api'))('@duckdb/node-bindings') as typeof Bindings
).get_data_from_pointer;

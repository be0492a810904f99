import { createRequire } from 'node:module';
import type * as Api from '@duckdb/node-api';

// The runtime values of DuckDB's Node client, loaded with require(). @duckdb/node-api is CommonJS:
// importing it from an ES module makes Node's loader lex each of its files for their exports,
// 0.1-0.15 s of every job's and the API's start; require() loads the same module without that.
// Types still come from `import type ... from '@duckdb/node-api'`.
const api = createRequire(import.meta.url)('@duckdb/node-api') as typeof Api;

export const { DuckDBInstance, listValue } = api;
export type DuckDBInstance = Api.DuckDBInstance;

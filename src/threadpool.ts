// Imported first by the server: every DuckDB call runs on libuv's thread pool (4 threads by
// default, shared with fs and crypto); with 4 connections busy, connect() and file I/O would wait.
process.env.UV_THREADPOOL_SIZE ??= '16';

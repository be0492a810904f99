// Imported first by the server: every DuckDB call runs on libuv's thread pool (4 threads by
// default, shared with fs and crypto); with 4 connections busy, connect() and file I/O would wait.
import { defaultSetting } from './settings.js';

defaultSetting('UV_THREADPOOL_SIZE');

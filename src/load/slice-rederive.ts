import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile } from '../db/sql.js';
import { findArchived } from './archive.js';
import { memberAsFile } from './archive-members.js';
import { identityOf } from './file-identity.js';
import { scanFile } from './scan-file.js';
import { slicesDir, writeSlice, type SlicePlan } from './slice-plan.js';

/** A slice cut again for a re-derivation: the file to read, the partner's file its records name, and its removal. */
export interface CutSlice {
  file: string;
  named: string;
  remove: () => void;
}

/**
 * The slices of large partner files (src/load/slices.ts) for `load.js --rederive`: a ledger row
 * that is a slice (loaded_slices) is cut again from the archived file, found once per file by its
 * SHA-256 (a gzip file's text is written out once per run). `close` removes what a run wrote.
 */
export class SliceSources {
  private readonly sources = new Map<string, { plan: SlicePlan; dir: string } | null>();
  private readonly written: string[] = [];
  private readonly done: (() => void)[] = [];

  constructor(private readonly landingDir: string) {}

  /** The slice the ledger row `fileKey` is, cut again; null when it is no slice, or its file's archive is gone. */
  async cut(conn: DuckDBConnection, fileKey: string): Promise<CutSlice | null> {
    const [row] = await queryFile(conn, 'ops/load/slice_of', { file_key: fileKey });
    if (!row) return null;
    const sourceKey = String(row['source_key']);
    const named = String(row['source_path']);
    const source = await this.source(conn, sourceKey, named);
    if (!source) return null;
    const start = Number(row['start_byte']);
    const firstLine = Number(row['first_line']);
    const file = join(source.dir, `.rederive-${randomUUID()}.ndjson`);
    // index 0 is the slice from the file's first byte: it needs no empty lines before it
    writeSlice(
      source.plan,
      source.dir,
      { index: start === 0 ? 0 : 1, firstLine, lastLine: firstLine, start, end: Number(row['end_byte']), key: fileKey },
      file,
    );
    return { file, named, remove: () => rmSync(file, { force: true }) };
  }

  close(): void {
    for (const path of this.written) rmSync(path, { force: true });
    for (const done of this.done) done();
  }

  private async source(
    conn: DuckDBConnection,
    key: string,
    path: string,
  ): Promise<{ plan: SlicePlan; dir: string } | null> {
    if (this.sources.has(key)) return this.sources.get(key) ?? null;
    // a file the archive's day merge took is read from its member (src/load/archive-members.ts)
    const member = await memberAsFile(conn, this.landingDir, key);
    if (member) this.done.push(member.done);
    const archived = member?.file ?? (await findArchived(this.landingDir, { file_key: key, path }));
    let found: { plan: SlicePlan; dir: string } | null = null;
    if (archived) {
      const dir = slicesDir(this.landingDir);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const plan: SlicePlan = { source: archived, key, identity: identityOf(archived), plannedAt: '', slices: [] };
      if (/\.gz$/i.test(archived)) {
        // a gzip stream cannot be read from a middle: its text, once, for all its slices
        const text = `.rederive-text-${randomUUID()}.ndjson`;
        this.written.push(join(dir, text));
        const fd = openSync(join(dir, text), 'w', 0o600);
        try {
          await scanFile(archived, false, plan.identity, fd);
        } finally {
          closeSync(fd);
        }
        plan.text = text;
      }
      found = { plan, dir };
    }
    this.sources.set(key, found);
    return found;
  }
}

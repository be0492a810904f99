import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  type ReadStream,
} from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { DuckDBConnection } from '@duckdb/node-api';
import { isMissingTable, queryFile, type Row } from '../db/sql.js';

/**
 * The landing archive's merged day files (docs/architecture.md, "The landing archive's merged
 * files"): `landing/loaded/<day>/archive-<n>.ndjson.gz`, one gzip member per archived file, with a
 * sidecar `archive-<n>.members.idx` (NDJSON) and the warehouse's archive_members rows saying where
 * each member is. A member read alone is its original file's bytes, lines and all.
 */
export const MERGED = /^archive-(\d+)\.ndjson\.gz$/;

/** The sidecar of a merged file: its members and the files it replaces. */
export const sidecarOf = (merged: string): string => merged.replace(/\.ndjson\.gz$/, '.members.idx');

/** Where one archived file's bytes are in a merged file. */
export interface Member {
  /** SHA-256 of the member's text: the key the ledger (loaded_files) knows the file by. */
  fileKey: string;
  /** Its name in the day folder before the merge. */
  name: string;
  mergedName: string;
  offset: number;
  length: number;
  lines: number;
  bytes: number;
  /** The key the purge's index knows its file by (null: none). */
  indexedKey: string | null;
}

/** A sidecar line: a member (with the key of the text a purge rewrote, if it did), a name replaced, or a member moved here. */
export interface MemberLine {
  kind: 'member';
  file_key: string;
  was_key: string | null;
  name: string;
  member_offset: number;
  member_length: number;
  lines: number;
  bytes: number;
  indexed_key: string | null;
}
/** A member moved out of the merged file `name` by a purge: its offset and length there. */
export interface MovedLine {
  kind: 'moved';
  name: string;
  member_offset: number;
  member_length: number;
}
export type SidecarLine = MemberLine | MovedLine | { kind: 'replaces'; name: string };

export function memberOfRow(row: Row): Member {
  return {
    fileKey: String(row['file_key'] ?? ''),
    name: String(row['name']),
    mergedName: String(row['merged_name']),
    offset: Number(row['member_offset']),
    length: Number(row['member_length']),
    lines: Number(row['lines']),
    bytes: Number(row['bytes']),
    indexedKey: row['indexed_key'] === null || row['indexed_key'] === undefined ? null : String(row['indexed_key']),
  };
}

/** The members of a day's merged files, by merged file, in offset order (sql/ops/compact/day_members.sql). */
export async function dayMembers(conn: DuckDBConnection, day: string): Promise<Map<string, Member[]>> {
  const out = new Map<string, Member[]>();
  for (const row of await queryFile(conn, 'ops/compact/day_members', { day })) {
    const member = memberOfRow(row);
    const list = out.get(member.mergedName) ?? [];
    list.push(member);
    out.set(member.mergedName, list);
  }
  return out;
}

/** The member that holds the loaded file with this key, and the day folder it is in; null when none. */
export async function memberOf(
  conn: DuckDBConnection,
  fileKey: string,
): Promise<{ day: string; member: Member } | null> {
  const [row] = await queryFile(conn, 'ops/compact/member_of_key', { file_key: fileKey });
  return row === undefined ? null : { day: String(row['day']), member: memberOfRow({ ...row, file_key: fileKey }) };
}

/** A member's compressed bytes, read alone: a range of the merged file. */
export function memberStream(mergedPath: string, member: { offset: number; length: number }): ReadStream {
  if (member.length === 0) return createReadStream(mergedPath, { start: 1, end: 0 });
  return createReadStream(mergedPath, { start: member.offset, end: member.offset + member.length - 1 });
}

/**
 * Writes a member's text (its original file's bytes) to `target`, reading the member alone: the
 * re-derive reads each member once, so a merged file is read once whatever number of files it holds.
 */
export async function extractMember(
  mergedPath: string,
  member: { offset: number; length: number },
  target: string,
): Promise<void> {
  await pipeline(memberStream(mergedPath, member), createGunzip(), createWriteStream(target, { mode: 0o600 }));
}

/**
 * The loaded file with this key as a file of its own, when only a merged archive holds it: the
 * member written under its original name to a scratch folder of the landing area (a dot name no
 * load or backup takes), and where it is archived (the day and the merged file, for the index).
 * `done` removes the copy.
 */
export async function memberAsFile(
  conn: DuckDBConnection,
  landingDir: string,
  fileKey: string,
): Promise<{ file: string; archive: { day: string; name: string }; done: () => void } | null> {
  const found = await memberOf(conn, fileKey);
  if (found === null) return null;
  const merged = join(landingDir, 'loaded', found.day, found.member.mergedName);
  if (!existsSync(merged)) return null;
  const dir = join(landingDir, '.members', fileKey.slice(0, 16));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, found.member.name);
  const done = () => rmSync(dir, { recursive: true, force: true });
  try {
    await extractMember(merged, found.member, file);
  } catch (error) {
    done();
    throw error;
  }
  return { file, archive: { day: found.day, name: found.member.mergedName }, done };
}

/** A sidecar's lines; empty when it cannot be read. */
export function readSidecar(path: string): SidecarLine[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SidecarLine);
}

/**
 * Where the archived file `name` of day `day` is when a merged file holds it: that file and the
 * member's bytes (`<merged> (member <name>, bytes <offset>+<length>)`); null when none does.
 */
export async function mergedPlace(
  conn: DuckDBConnection,
  landingDir: string,
  day: string,
  name: string,
): Promise<string | null> {
  let row: Row | undefined;
  try {
    [row] = await queryFile(conn, 'ops/compact/member_named', { day, name });
  } catch (error) {
    // a warehouse no release with merged archives has opened for writing has no such table
    if (isMissingTable(error, 'archive_members')) return null;
    throw error;
  }
  if (row === undefined) return null;
  const merged = join(landingDir, 'loaded', day, String(row['merged_name']));
  if (!existsSync(merged)) return null;
  return `${merged} (member ${name}, bytes ${Number(row['member_offset'])}+${Number(row['member_length'])})`;
}

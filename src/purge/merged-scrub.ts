import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile } from '../db/sql.js';
import { dayMembers, memberStream, type Member } from '../load/archive-members.js';
import { recoverDay, switchMerged, writeMerged, type MergeInput } from '../load/archive-merge.js';
import { splitLines, type ScrubOutcome } from './ndjson-scrub.js';

/**
 * Takes the lines `belongs` claims out of a merged archive file (src/load/archive-members.ts),
 * member by member. Only the members whose file the purge's index names for the drivers are read
 * (sql/ops/compact/members_holding.sql), each alone; those that hold a claimed line are rewritten
 * (a removed line leaves an empty one, so the member's line numbers stay its original file's) into
 * a new merged file of their own, switched in like a merge: one transaction enters their new keys
 * in the ledger, the members and the purge's index, and their bytes in this file to overwrite; then
 * those bytes are overwritten with zeros and this file's sidecar forgets them
 * (src/load/archive-merge.ts, fillHoles). The other members stay untouched, so a purge costs the
 * driver's members, not the merged file. A member left with no line goes; a file left with no
 * member goes. A member that cannot be read to its end (it may hold the driver) goes, as a damaged
 * archive is removed; the others stay.
 */
export async function scrubMerged(
  conn: DuckDBConnection,
  file: string,
  belongs: (line: Buffer) => boolean,
  now: Date,
): Promise<ScrubOutcome> {
  const dayDir = dirname(file);
  const day = basename(dayDir);
  const name = basename(file);
  // a merge or a rewrite cut short is put right first: it may switch or remove this very file
  await recoverDay(conn, dayDir, day, now);
  if (!existsSync(file)) return { records: 0, removed: false, bytesRead: 0 };
  const members = (await dayMembers(conn, day)).get(name) ?? [];
  // only the members whose file the index names for the drivers (or does not know) are read
  const named = new Set(
    (await queryFile(conn, 'ops/compact/members_holding', { day, merged: name })).map((r) =>
      Number(r['member_offset']),
    ),
  );
  let bytesRead = 0;
  const holding = new Map<Member, number>();
  const unreadable = new Set<Member>();
  for (const member of members.filter((m) => named.has(m.offset))) {
    bytesRead += member.length;
    let records = 0;
    try {
      await pipeline(memberStream(file, member), createGunzip(), (chunks: AsyncIterable<Buffer>) =>
        drain(splitLines(chunks, (line) => void (belongs(line) && records++))),
      );
    } catch {
      // it cannot be filtered, so it may hold the driver's records: it goes, the other members stay
      unreadable.add(member);
      continue;
    }
    if (records > 0) holding.set(member, records);
  }
  const records = [...holding.values()].reduce((a, b) => a + b, 0);
  if (records === 0 && unreadable.size === 0) return { records, removed: false, bytesRead };
  // only the members that held a claimed line (or could not be read) move out, rewritten, into a
  // merged file of their own; the others stay where they are, untouched
  const moving = members.filter((m) => holding.has(m) || unreadable.has(m));
  const inputs: MergeInput[] = [...holding.keys()].map((member) => ({
    kind: 'filter',
    member,
    mergedPath: file,
    filter: () => lineFilter(belongs),
  }));
  const moved = moving.map((m) => ({ name, offset: m.offset, length: m.length }));
  const merged = await writeMerged(dayDir, inputs, [], moved);
  await switchMerged(conn, dayDir, day, merged.name, now);
  return { records, removed: !existsSync(file), bytesRead: bytesRead + merged.bytesIn };
}

/** The purge's filter of one member: a claimed line leaves an empty line; whether any line is left. */
function lineFilter(belongs: (line: Buffer) => boolean) {
  let kept = false;
  return {
    transform: (chunks: AsyncIterable<Buffer>) =>
      splitLines(chunks, (line, parts) => {
        if (belongs(line)) return;
        if (line.length > 0) parts.push(line);
        if (!kept && line.length > 0 && line.toString('utf8').trim() !== '') kept = true;
      }),
    kept: () => kept,
  };
}

async function drain(chunks: AsyncIterable<Buffer>): Promise<void> {
  for await (const _ of chunks);
}

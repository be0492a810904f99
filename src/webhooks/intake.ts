import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from '../fsutil.js';
import type { IncomingEvent, OutboxStore, RejectedLine } from './outbox-store.js';
import { silent, type Progress } from '../progress.js';

const PRINTABLE = /^[\x21-\x7e]{1,200}$/;

export const EVENT_TYPES = ['trip.created', 'trip.updated', 'safety_score.updated', 'user.deleted'] as const;

export interface IntakeResult {
  files: number;
  events: number;
  /** Events already in the outbox (a file written again after a crash). */
  known: number;
  rejected: number;
  /** Files that could not be read, set aside in events/failed/ with a .reason.txt. */
  failedFiles: number;
}

/**
 * Moves the jobs' event files (events/pending/*.ndjson) into the outbox: each file's events are
 * committed in one transaction, and only then is the file removed. A crash in between takes the
 * file in again, which changes nothing (known ids are left alone).
 */
export async function intakeEventFiles(
  outbox: OutboxStore,
  eventsDir: string,
  now: Date,
  failures: Map<string, number> = new Map(),
  progress: Progress = silent,
): Promise<IntakeResult> {
  const result: IntakeResult = { files: 0, events: 0, known: 0, rejected: 0, failedFiles: 0 };
  if (!existsSync(eventsDir)) return result;
  // dot files are the jobs' temp files, not yet renamed into place
  const files = readdirSync(eventsDir)
    .filter((f) => f.endsWith('.ndjson') && !f.startsWith('.'))
    .sort();
  let removed = false;
  for (const name of files) {
    const path = join(eventsDir, name);
    try {
      const { events, rejects } = parseEventFile(readFileSync(path, 'utf8'));
      const taken = await outbox.intake(name, events, rejects, now);
      rmSync(path, { force: true });
      removed = true;
      failures.delete(name);
      result.files++;
      result.events += taken;
      result.known += events.length - taken;
      result.rejected += rejects.length;
    } catch (error) {
      // tried again at the next turns (a passing fault such as EMFILE); a file that keeps failing,
      // or can never be read, is set aside so it cannot hold up the files behind it
      const message = error instanceof Error ? error.message : String(error);
      const count = (failures.get(name) ?? 0) + 1;
      if ((error as NodeJS.ErrnoException).code === 'EISDIR' || count >= MAX_INTAKE_FAILURES) {
        setAside(eventsDir, name, message);
        failures.delete(name);
        result.failedFiles++;
        progress(`deliver: ${name} set aside in events/failed after ${count} failed intake(s): ${message}`);
      } else {
        failures.set(name, count);
        progress(
          `deliver: ${name} could not be taken in (${count}/${MAX_INTAKE_FAILURES}), will try again: ${message}`,
        );
      }
    }
  }
  if (removed) fsyncDir(eventsDir);
  return result;
}

const MAX_INTAKE_FAILURES = 3;

function setAside(eventsDir: string, name: string, reason: string): void {
  const failedDir = join(eventsDir, '..', 'failed');
  mkdirSync(failedDir, { recursive: true });
  const target = join(failedDir, `${Date.now()}-${name}`);
  renameSync(join(eventsDir, name), target);
  writeFileSync(`${target}.reason.txt`, `${reason}\n`);
}

/**
 * One event per line, `{id, type, createdAt, appId, data}`. The line itself is the body that is
 * signed and sent, byte for byte. A line that is not such an event is rejected with its reason;
 * an id repeated within the file keeps its first line.
 */
export function parseEventFile(text: string): { events: IncomingEvent[]; rejects: RejectedLine[] } {
  const events: IncomingEvent[] = [];
  const rejects: RejectedLine[] = [];
  const seen = new Set<string>();
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const lineNo = index + 1;
    const reason = invalidReason(line);
    if (typeof reason === 'string') {
      rejects.push({ lineNo, reason, raw: line.slice(0, 10_000) });
      continue;
    }
    if (seen.has(reason.id)) continue;
    seen.add(reason.id);
    events.push({
      lineNo,
      eventId: reason.id,
      appId: reason.appId,
      eventType: reason.type,
      body: line,
      createdAt: reason.createdAt,
    });
  }
  return { events, rejects };
}

function invalidReason(line: string): string | { id: string; type: string; appId: string; createdAt: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'invalid_json';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not_an_object';
  const e = value as Record<string, unknown>;
  // ids travel in headers and in SQL parameters: printable ASCII only (the jobs write evt_ + hex)
  if (typeof e['id'] !== 'string' || !PRINTABLE.test(e['id'])) return 'invalid_id';
  if (typeof e['type'] !== 'string' || !(EVENT_TYPES as readonly string[]).includes(e['type'])) return 'unknown_type';
  if (typeof e['appId'] !== 'string' || !PRINTABLE.test(e['appId'])) return 'missing_app_id';
  const created = typeof e['createdAt'] === 'string' ? new Date(e['createdAt']) : null;
  if (!created || Number.isNaN(created.getTime()) || created.getUTCFullYear() < 1970 || created.getUTCFullYear() > 9999)
    return 'invalid_created_at';
  if (typeof e['data'] !== 'object' || e['data'] === null) return 'missing_data';
  return { id: e['id'], type: e['type'], appId: e['appId'], createdAt: created.toISOString() };
}

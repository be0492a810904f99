import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { badLines } from './bad-lines.js';
import { countBy, spoilTrip } from './bad-contents.js';
import type { TripRecord } from './types.js';

export interface BadRecordsFile {
  path: string;
  trips: number;
  points: number;
  events: number;
  badLines: number;
  badByReason: Record<string, number>;
  droppedPointsByReason: Record<string, number>;
  quarantinedEventsByReason: Record<string, number>;
}

export const BAD_RECORDS_FILE = 'bad-records.ndjson';

/**
 * Writes bad-records.ndjson: the given trips carrying bad points and events (loadable), then
 * lines the loader must reject. Written from TypeScript because broken JSON is the point.
 *
 * @example const bad = writeBadRecords('/tmp/out', trips); bad.badByReason.invalid_json; // 2
 */
export function writeBadRecords(outDir: string, trips: readonly TripRecord[]): BadRecordsFile {
  const spoiled = trips.map(spoilTrip);
  const rejected = badLines(trips);
  const lines = [...spoiled.map((s) => JSON.stringify(s.record)), ...rejected.map((b) => b.line)];
  const path = join(outDir, BAD_RECORDS_FILE);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return {
    path,
    trips: spoiled.length,
    points: sum(spoiled.map((s) => s.record.points.length)),
    events: sum(spoiled.map((s) => s.record.events.length)),
    badLines: rejected.length,
    badByReason: countBy(rejected.map((b) => b.reason)),
    droppedPointsByReason: mergeCounts(spoiled.map((s) => s.droppedPointsByReason)),
    quarantinedEventsByReason: mergeCounts(spoiled.map((s) => s.quarantinedEventsByReason)),
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function mergeCounts(all: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const merged: Record<string, number> = {};
  for (const counts of all) for (const [key, n] of Object.entries(counts)) merged[key] = (merged[key] ?? 0) + n;
  return merged;
}

import type { LoadResult } from './load.js';
import type { ScoreResult } from './score.js';
import type { PublishResult } from '../publish/publish.js';
import type { ReasonCount } from '../load/report.js';

const sum = (values: Record<string, number>): number => Object.values(values).reduce((a, b) => a + b, 0);

export function publishSummary(p: PublishResult): string {
  return p.published ? `published version ${p.version} (slot ${p.slot})` : `version ${p.version} already published`;
}

export function loadSummary(r: LoadResult): string {
  const t = r.totals;
  return (
    (r.uploadBatches && r.uploadBatches.uploads > 0
      ? `${r.uploadBatches.uploads} SDK upload(s) batched into ${r.uploadBatches.files.length} file(s); `
      : '') +
    `${t.files - t.filesSkipped - t.filesFailed} file(s) loaded, ${t.filesSkipped} skipped, ${t.filesFailed} failed; ${t.tripsLoaded} trips (${t.tripsReplaced} replaced, ` +
    `${sum(t.tripsAbnormal)} abnormal), ${sum(t.rejected)} records rejected, ${sum(t.pointsDropped)} points dropped, ` +
    `${sum(t.eventsQuarantined)} events quarantined; ${publishSummary(r.publish)} in ${r.seconds.toFixed(1)} s` +
    (r.refused.length > 0 ? `; ${r.refused.length} not a regular file (left alone)` : '') +
    intakeLine(r.intake) +
    failedLine(t.filesFailedBy) +
    reasonLines(r.reasons)
  );
}

/** What the landing area's intake did besides loading, when it did anything. */
function intakeLine(i: LoadResult['intake']): string {
  const parts = [
    i.retaken > 0 ? `${i.retaken} written after it was loaded, taken again whole` : '',
    i.settling > 0 ? `${i.settling} still being written, left for later` : '',
    i.vanished > 0 ? `${i.vanished} gone since the listing` : '',
    i.renamed > 0 ? `${i.renamed} renamed (a name not UTF-8)` : '',
  ].filter((p) => p !== '');
  return parts.length > 0 ? `; landing: ${parts.join(', ')}` : '';
}

/** The files that failed, by why: each set aside under landing/failed/ with its reason, or left for the next run. */
function failedLine(by: Record<string, number>): string {
  const entries = Object.entries(by);
  return entries.length === 0
    ? ''
    : `\n  files failed: ${entries.map(([why, n]) => `${why} ${n}`).join(', ')} (each failed alone; its reason is beside it in landing/failed/)`;
}

const KIND_LINES = [
  ['record', 'records rejected', ' (node jobs/quarantine.js lists them, with file and line)'],
  ['event', 'events quarantined', ' (their trips kept)'],
  ['point', 'points dropped', ''],
] as const;

/** The end of a load's summary: one line per kind of thing set aside, its reasons and their counts. */
export function reasonLines(reasons: ReasonCount[]): string {
  return KIND_LINES.map(([kind, label, hint]) => {
    const of = reasons.filter((r) => r.kind === kind);
    return of.length === 0 ? '' : `\n  ${label}: ${of.map((r) => `${r.reason} ${r.count}`).join(', ')}${hint}`;
  }).join('');
}

export function scoreSummary(r: ScoreResult): string {
  const dates = [...new Set(r.runs.map((x) => x.date))].sort();
  const range = dates.length <= 1 ? (dates[0] ?? 'no date') : `${dates[0]}..${dates[dates.length - 1]}`;
  const users = r.runs.reduce((a, x) => a + x.users, 0);
  const nothing = r.nothingToScore ? `nothing to score: ${r.nothingToScore}; ` : '';
  return `${nothing}${r.runs.length} run(s) as of ${range}, ${users} user score(s); ${publishSummary(r.publish)} in ${r.seconds.toFixed(1)} s`;
}

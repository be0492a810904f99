import type { QuarantineList, QuarantineShow, QuarantinedItem } from './quarantine.js';

/** The operator's text for `quarantine.js list` and `show` (with --json the result goes out whole). */
export function formatQuarantine(result: QuarantineList | QuarantineShow): string {
  return result.op === 'show' ? formatShow(result.item) : formatList(result);
}

function formatList(r: QuarantineList): string {
  if (!r.warehouse) return '0 quarantined: nothing has been loaded into this data folder yet';
  const records = r.byReason.filter((b) => b.kind === 'record').reduce((a, b) => a + b.count, 0);
  const events = r.matching - records;
  const head = `${r.matching} quarantined (${records} record(s) rejected, ${events} event(s) set aside)${r.items.length < r.matching ? `; the ${r.items.length} newest shown (--limit)` : ''}`;
  if (r.matching === 0) return head;
  const reasons = `  by reason: ${r.byReason.map((b) => `${b.reason} ${b.count}${b.kind === 'event' ? ' (event)' : ''}`).join(', ')}`;
  const width = Math.max(2, ...r.items.map((i) => i.id.length));
  const reasonWidth = Math.max(6, ...r.items.map((i) => i.reason.length));
  const lines = r.items.map(
    (i) =>
      `  ${i.id.padEnd(width)}  ${loaded(i)}  ${i.kind.padEnd(6)}  ${i.reason.padEnd(reasonWidth)}  ${i.sourceFile}:${i.lineNo}`,
  );
  return [
    head,
    reasons,
    `  ${'ID'.padEnd(width)}  ${'LOADED (UTC)'.padEnd(19)}  KIND    ${'REASON'.padEnd(reasonWidth)}  SOURCE (file:line)`,
    ...lines,
    '  (quarantine.js show ID: the raw line)',
  ].join('\n');
}

function formatShow(i: QuarantinedItem): string {
  return [
    `${i.id}: ${i.kind === 'record' ? 'record rejected' : 'event set aside (its trip was kept)'}: ${i.reason}`,
    ...(i.detail ? [`  detail:  ${i.detail}`] : []),
    `  loaded:  ${loaded(i)} UTC`,
    `  source:  ${i.sourceFile}:${i.lineNo}${i.kind === 'event' ? ' (the line of its trip record)' : ''}${i.nowAt ? ` (the file is now ${i.nowAt})` : ''}`,
    `  app:     ${i.appId ?? '-'}`,
    `  trip:    ${i.tripId ?? '-'}`,
    `  raw:     ${i.raw ?? '(a Parquet row: read it from the file by its row number)'}`,
  ].join('\n');
}

const loaded = (i: QuarantinedItem): string => i.quarantinedAt.slice(0, 19).replace('T', ' ');

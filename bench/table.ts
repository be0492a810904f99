import { formatValue, type Measurement } from './context.js';

/**
 * The result table as Markdown (stage, metric, value, target, met), which reads as well in a
 * terminal as in docs/benchmarks.md.
 */
export function resultTable(measurements: Measurement[], judged = true): string {
  // below the full size a comparison with a target is shown, but it is not the target's verdict
  const met = (m: Measurement): string =>
    (m.met === true ? 'yes' : m.met === false ? '**NO**' : '') +
    (m.met !== undefined && m.met !== null && !judged ? ' (this size)' : '');
  const rows = measurements.map((m) => [
    m.stage,
    m.metric,
    `${formatValue(m.value)}${m.unit ? ` ${m.unit}` : ''}`,
    m.target ?? '',
    met(m),
  ]);
  const header = ['stage', 'metric', 'value', 'target', judged ? 'met' : 'met at this size'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The targets the run missed, one line each, for the summary. */
export function missedTargets(measurements: Measurement[]): string[] {
  return measurements
    .filter((m) => m.met === false)
    .map((m) => `${m.stage}: ${m.metric} = ${formatValue(m.value)} ${m.unit} (target ${m.target})`);
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fsutil.js';

/** What a batch job's run did, for its metrics file. */
export interface JobRun {
  /** When the run started and how long it took. */
  startedAt: Date;
  seconds: number;
  /** The job's exit code (src/jobs/cli.ts, EXIT): 0 is a success. */
  exitCode: number;
  /** Records by outcome (`loaded`, `scored`, `exported`, `purged`). */
  records?: Record<string, number>;
  /** Records rejected, by reason. */
  rejected?: Record<string, number>;
  /** Input files by outcome (`loaded`, `skipped`, `failed`), and the failed ones by why (a check's name, `unreadable`, `changed_during_load`). */
  files?: Record<string, number>;
  filesFailed?: Record<string, number>;
}

const LAST_SUCCESS = 'driving_job_last_success_timestamp_seconds';

/** `<dir>/driving_job_<job>.prom`: one file per job, so that jobs never write each other's. */
export const jobMetricsFile = (dir: string, job: string): string => join(dir, `driving_job_${job}.prom`);

/**
 * Writes a job's metrics where node exporter's textfile collector reads them (`*.prom`), atomically
 * (a temp file renamed over the old one: the collector never reads half a file). A failed run
 * keeps the last success time of the previous file, so "late" alerts count from the last run that
 * worked. Readable by all (0644): the collector runs as another user.
 */
export async function writeJobMetrics(dir: string, job: string, run: JobRun): Promise<string> {
  const file = jobMetricsFile(dir, job);
  const families: Family[] = [];
  const gauge = (name: string, help: string): Family['samples'] => {
    const family: Family = { name, help, samples: [] };
    families.push(family);
    return family.samples;
  };
  const finishedAt = (run.startedAt.getTime() + run.seconds * 1000) / 1000;
  const lastSuccess = run.exitCode === 0 ? finishedAt : previousSuccess(file, job);
  gauge('driving_job_last_run_timestamp_seconds', "When the job's last run ended (Unix time)").push([
    { job },
    finishedAt,
  ]);
  if (lastSuccess !== null)
    gauge(LAST_SUCCESS, 'When the job last ended with exit status 0 (Unix time)').push([{ job }, lastSuccess]);
  gauge('driving_job_duration_seconds', "How long the job's last run took").push([{ job }, run.seconds]);
  gauge(
    'driving_job_exit_status',
    "The exit status of the job's last run (0 done, 1 internal, 2 input, 3 busy, 4 a check stopped the publish)",
  ).push([{ job }, run.exitCode]);
  const records = gauge(
    'driving_job_records',
    "Records the job's last run handled, by outcome (loaded, scored, exported, purged)",
  );
  for (const [outcome, n] of Object.entries(run.records ?? {})) records.push([{ job, outcome }, n]);
  const rejected = gauge('driving_job_records_rejected', "Records the job's last run rejected, by reason");
  for (const [reason, n] of Object.entries(run.rejected ?? {})) rejected.push([{ job, reason }, n]);
  if (run.files) {
    const files = gauge(
      'driving_job_files',
      "Input files the job's last run took, by outcome (loaded, skipped, failed; and in the landing area retaken: written after a load took them, settling: left within the quiet period, vanished: gone since the listing, renamed: a name not UTF-8)",
    );
    for (const [outcome, n] of Object.entries(run.files)) files.push([{ job, outcome }, n]);
    const failed = gauge(
      'driving_job_files_failed',
      "Input files the job's last run set aside or left for the next run, by why (the check their change failed, unreadable, changed_during_load)",
    );
    for (const [reason, n] of Object.entries(run.filesFailed ?? {})) failed.push([{ job, reason }, n]);
  }
  writeFileAtomic(file, exposition(families), 0o644);
  return file;
}

/** A gauge of the file: its name, help and samples (labels, value). */
interface Family {
  name: string;
  help: string;
  samples: [Record<string, string>, number][];
}

/**
 * The families in Prometheus' text format, as prom-client's registry writes them (a test compares
 * the two): written here because loading prom-client (about 90 modules with its dependencies)
 * cost every job's start more than the rest of this file.
 */
function exposition(families: Family[]): string {
  const escaped = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  const value = (v: number) => (Number.isNaN(v) ? 'Nan' : !Number.isFinite(v) ? (v < 0 ? '-Inf' : '+Inf') : `${v}`);
  const sample = (name: string, [labels, v]: [Record<string, string>, number]) =>
    `${name}{${Object.entries(labels)
      .map(([k, x]) => `${k}="${escaped(x).replace(/"/g, '\\"')}"`)
      .join(',')}} ${value(v)}`;
  const blocks = families.map((f) =>
    [`# HELP ${f.name} ${escaped(f.help)}`, `# TYPE ${f.name} gauge`, ...f.samples.map((s) => sample(f.name, s))].join(
      '\n',
    ),
  );
  return `${blocks.join('\n\n')}\n`;
}

/** The last success time the previous file recorded, or null (none yet, or unreadable). */
function previousSuccess(file: string, job: string): number | null {
  if (!existsSync(file)) return null;
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${LAST_SUCCESS}{job="${job}"}`));
  const value = Number(line?.split(' ').pop());
  return line && Number.isFinite(value) ? value : null;
}

// A job's metrics file (src/metrics/textfile.ts) is written without prom-client: the same bytes as
// prom-client's registry gives for the same gauges (the second implementation here), escapes,
// non-finite values and gauges without samples included.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gauge, Registry } from 'prom-client';
import { writeJobMetrics, type JobRun } from '../../src/metrics/textfile.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The file as prom-client's registry writes the same gauges (what textfile.ts used before). */
async function withPromClient(job: string, run: JobRun, lastSuccess: number | null): Promise<string> {
  const registry = new Registry();
  const registers = [registry];
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames: ['job', ...labelNames], registers });
  const finishedAt = (run.startedAt.getTime() + run.seconds * 1000) / 1000;
  gauge('driving_job_last_run_timestamp_seconds', "When the job's last run ended (Unix time)").set({ job }, finishedAt);
  if (lastSuccess !== null)
    gauge('driving_job_last_success_timestamp_seconds', 'When the job last ended with exit status 0 (Unix time)').set(
      { job },
      lastSuccess,
    );
  gauge('driving_job_duration_seconds', "How long the job's last run took").set({ job }, run.seconds);
  gauge(
    'driving_job_exit_status',
    "The exit status of the job's last run (0 done, 1 internal, 2 input, 3 busy, 4 a check stopped the publish)",
  ).set({ job }, run.exitCode);
  const records = gauge(
    'driving_job_records',
    "Records the job's last run handled, by outcome (loaded, scored, exported, purged)",
    ['outcome'],
  );
  for (const [outcome, n] of Object.entries(run.records ?? {})) records.set({ job, outcome }, n);
  const rejected = gauge('driving_job_records_rejected', "Records the job's last run rejected, by reason", ['reason']);
  for (const [reason, n] of Object.entries(run.rejected ?? {})) rejected.set({ job, reason }, n);
  return registry.metrics();
}

describe('a job metrics file', () => {
  const cases: [string, string, JobRun][] = [
    [
      'a success with records and rejections',
      'load',
      {
        startedAt: new Date(1_000_000_000_123),
        seconds: 12.5,
        exitCode: 0,
        records: { loaded: 40, purged: 2 },
        rejected: { invalid_time: 3, 'a "quoted"\\reason\nwith a newline': 1 },
      },
    ],
    ['a success without records', 'score', { startedAt: new Date(1_795_000_000_000), seconds: 0.125, exitCode: 0 }],
    [
      'non-finite and negative values',
      'export',
      {
        startedAt: new Date(0),
        seconds: 1,
        exitCode: 0,
        records: { a: Number.NaN, b: Number.POSITIVE_INFINITY, c: Number.NEGATIVE_INFINITY, d: -0.5, e: 1e21 },
      },
    ],
  ];
  for (const [name, job, run] of cases) {
    it(`has the bytes prom-client's registry gives: ${name}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'textfile-'));
      dirs.push(dir);
      const file = await writeJobMetrics(dir, job, run);
      const finishedAt = (run.startedAt.getTime() + run.seconds * 1000) / 1000;
      expect(readFileSync(file, 'utf8')).toBe(await withPromClient(job, run, finishedAt));
    });
  }

  it('keeps the previous success time after a failed run, as prom-client wrote it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'textfile-'));
    dirs.push(dir);
    const ok: JobRun = { startedAt: new Date(1_700_000_000_000), seconds: 3, exitCode: 0 };
    await writeJobMetrics(dir, 'score', ok);
    const failed: JobRun = { startedAt: new Date(1_700_000_100_000), seconds: 2, exitCode: 4, records: { scored: 0 } };
    const file = await writeJobMetrics(dir, 'score', failed);
    expect(readFileSync(file, 'utf8')).toBe(await withPromClient('score', failed, 1_700_000_003));
  });
});

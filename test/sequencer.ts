import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The files that take longest, slowest first, by their wall time in a whole run (test/README.md).
// The workers take files in this order, so the long ones
// start at once and the short ones fill the end: the run ends when the last file does, and a long
// file started last would run alone. Vitest orders by its cache of the last run's durations where
// it has one; a fresh clone (CI) has none and would order by file size.
const SLOWEST = [
  'test/ops/jobs.test.ts',
  'test/api/export-backpressure.test.ts',
  'test/api/server.test.ts',
  'test/load/rederive.test.ts',
  'test/serving/equivalence.test.ts',
  'test/serving/publish.test.ts',
  'test/load/load-read.test.ts',
  'test/load/load.test.ts',
  'test/score/score-publish.test.ts',
  'test/webhooks/events-updates.test.ts',
  'test/backup/backup.test.ts',
  'test/docs/readme.test.ts',
  'test/state/deletions.test.ts',
  'test/load/score-lifting.test.ts',
  'test/serving/trust.test.ts',
  'test/score/score-same-bits.test.ts',
  'test/load/load-order.test.ts',
  'test/serving/layers.test.ts',
  'test/webhooks/processes.test.ts',
  'test/load/upload-batches.test.ts',
  'test/load/intake.test.ts',
  'test/state/previous-release.test.ts',
  'test/bench/generate.test.ts',
  'test/load/purge.test.ts',
  'test/serving/damage.test.ts',
  'test/backup/warehouse.test.ts',
  'test/score/score-settle.test.ts',
  'test/load/kill.test.ts',
  'test/api/abuse.test.ts',
  'test/webhooks/events.test.ts',
  'test/load/quarantine.test.ts',
  'test/ops/cluster.test.ts',
  'test/ops/deploy.test.ts',
];

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.findIndex((name) => f.moduleId.endsWith(name));
      return i === -1 ? SLOWEST.length : i;
    };
    // stable: files not listed keep the order vitest gave them, after the listed ones
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

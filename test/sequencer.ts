import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The files that take longest, slowest first, by their wall time in a whole run (test/README.md).
// The workers take files in this order, so the long ones
// start at once and the short ones fill the end: the run ends when the last file does, and a long
// file started last would run alone. Vitest orders by its cache of the last run's durations where
// it has one; a fresh clone (CI) has none and would order by file size.
const SLOWEST = [
  'test/e2e/jobs.test.ts',
  'test/api/export-backpressure.test.ts',
  'test/e2e/server.test.ts',
  'test/sql/rederive.test.ts',
  'test/serving/equivalence.test.ts',
  'test/sql/publish.test.ts',
  'test/sql/load-read.test.ts',
  'test/sql/load.test.ts',
  'test/sql/score-publish.test.ts',
  'test/sql/events-updates.test.ts',
  'test/backup/backup.test.ts',
  'test/e2e/readme.test.ts',
  'test/state/deletions.test.ts',
  'test/api/score-lifting.test.ts',
  'test/serving/trust.test.ts',
  'test/sql/score-same-bits.test.ts',
  'test/sql/load-order.test.ts',
  'test/serving/layers.test.ts',
  'test/webhooks/processes.test.ts',
  'test/api/upload-batches.test.ts',
  'test/sql/intake.test.ts',
  'test/upgrade/previous-release.test.ts',
  'test/unit/generate.test.ts',
  'test/sql/purge.test.ts',
  'test/serving/damage.test.ts',
  'test/backup/warehouse.test.ts',
  'test/sql/score-settle.test.ts',
  'test/e2e/kill.test.ts',
  'test/e2e/abuse.test.ts',
  'test/sql/events.test.ts',
  'test/e2e/quarantine.test.ts',
  'test/e2e/cluster.test.ts',
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
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

import { basename } from 'node:path';
import { firstLine } from '../errors.js';
import { ChangedDuringLoadError } from '../load/file-identity.js';
import { kindOf, moveLanded } from '../load/landing.js';
import { loadFiles } from '../load/load-file.js';
import { emptyFileReport, totals, type FileReport } from '../load/report.js';
import { recordTaken, type TakenFile } from '../load/retake.js';
import { splitBatch } from '../load/split-batch.js';
import { isMachineError } from '../machine-error.js';
import { CheckFailedError } from '../warehouse/checks.js';
import { routeOptions } from '../warehouse/route-files.js';
import type { Listing } from './load-intake.js';
import type { LoadRun } from './load-run.js';

/** The route files a run writes per file, and the publish any still missing. */
export type RunRoutes = ReturnType<typeof routeOptions> & { incremental: boolean };

export const routesOf = (run: LoadRun): RunRoutes => ({
  ...routeOptions(run.paths, run.settings.pointsRetentionDays, run.now),
  incremental: run.options.routesIncremental ?? false,
});

/**
 * Every listed file validated, derived and merged in its own transaction (two at a time by
 * default, finished in order), then archived, set aside with its reason, or left for the next run;
 * one file never holds up the others. A machine error (a full disk) fails the run instead.
 */
export async function deriveInputs(run: LoadRun, listing: Listing, routes: RunRoutes): Promise<FileReport[]> {
  const { paths, options, settings, beat, progress, fromLanding, day } = run;
  const { files, sliced } = listing;
  const reports: FileReport[] = [];
  const taken: TakenFile[] = [];
  let t0 = Date.now();
  // the files being read, validated and derived now
  const inFlight = new Map<number, string>();
  const deriving = () => {
    // not `[2/10]`: that names a file finished (the line a watcher, or test/load/kill.test.ts, waits for)
    if (inFlight.size > 0)
      beat.doing(`load: deriving ${[...inFlight].map(([i, f]) => `${f} (${i + 1} of ${files.length})`).join(' and ')}`);
  };
  await loadFiles(
    run.wh,
    files,
    {
      onStart: (file, index) => {
        inFlight.set(index, sliced?.start(file) ?? file);
        deriving();
      },
      pointsDir: paths.pointsDir,
      now: run.now,
      parseBytes: options.parseBytes,
      pointsPerPart: options.pointsPerPart ?? settings.pointsPerPart,
      afterStage: options.afterStage,
      concurrency: options.concurrency ?? settings.loadConcurrency,
      routes,
      // the purge finds a file's archive by this day and its name (src/purge/index.ts)
      ...(fromLanding ? { archiveDay: day } : {}),
      standsFor: (file) => sliced?.standsFor(file),
    },
    ({ file, report: loaded, error, identity }, index) => {
      const slice = sliced?.settle(file, { report: loaded, error });
      // renamed or removed by its writer since the listing: not a failure, and under its new name
      // it is listed again (already loaded, its bytes are skipped)
      if (!slice && !loaded && fromLanding && kindOf(file) === null) {
        listing.intake.vanished++;
        inFlight.delete(index);
        progress(
          `load: [${index + 1}/${files.length}] ${file}: gone since the listing (renamed or removed by its writer)`,
        );
        return;
      }
      const report = slice ?? settleFile(run, listing, file, { loaded, error, identity }, taken);
      reports.push(report);
      inFlight.delete(index);
      deriving();
      const summary = report.failed
        ? `FAILED: ${report.failed}`
        : report.skipped
          ? 'already loaded, skipped'
          : `${describe(report)}${report.routesDeferred ? `; route files left to the publish: ${report.routesDeferred}` : ''}`;
      // files are derived two at a time but finish in order: the time is since the previous one finished
      progress(
        `load: [${index + 1}/${files.length}] ${sliced?.label(file) ?? file}: ${summary} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
      );
      t0 = Date.now();
    },
  );
  if (fromLanding) recordTaken(paths.landingDir, taken);
  return reports;
}

/** Where one derived file goes: archived, left for the next run, or set aside with its reason. */
function settleFile(
  run: LoadRun,
  listing: Listing,
  file: string,
  outcome: { loaded: FileReport | null | undefined; error: unknown; identity: TakenFile['identity'] | undefined },
  taken: TakenFile[],
): FileReport {
  const { paths, fromLanding, day, progress } = run;
  const { loaded, error, identity } = outcome;
  if (loaded) {
    const archived = fromLanding ? moveLanded(paths.landingDir, file, day, 'loaded') : null;
    if (fromLanding && archived === null) {
      listing.intake.vanished++;
      progress(`load: ${file}: loaded, then gone before it was archived (renamed or removed by its writer)`);
    }
    if (archived !== null && identity) taken.push({ archived, name: basename(file), identity, takenAt: Date.now() });
    return loaded;
  }
  // nothing of it was kept, and it stays where it is: the next run takes it again
  if (error instanceof ChangedDuringLoadError)
    return { ...emptyFileReport(file, false), failed: firstLine(error), failedBy: 'changed_during_load', retry: true };
  // the disk is full (or read-only, or failing), not the file wrong: it stays where it is and the
  // batch fails, so that the continuous load tries again once there is room
  if (isMachineError(error)) throw error;
  // One file must not hold up the others: one that cannot be read, or whose change fails a check
  // (rolled back whole), is set aside with its reason (the check and an example row).
  const failedBy = error instanceof CheckFailedError ? (error.failures[0]?.check ?? 'checks') : 'unreadable';
  const report: FileReport = { ...emptyFileReport(file, false), failed: firstLine(error), failedBy };
  // a batch of many uploads is not one partner's file: it goes back record by record
  const pieces = fromLanding && error instanceof CheckFailedError ? splitBatch(file) : 0;
  if (pieces > 0)
    return {
      ...report,
      failed: `${report.failed}; its ${pieces} records go back into the landing area to load one by one`,
      retry: true,
    };
  if (fromLanding) moveLanded(paths.landingDir, file, day, 'failed', report.failed);
  return report;
}

function describe(report: FileReport): string {
  const t = totals([report]);
  const rejected = Object.values(t.rejected).reduce((a, b) => a + b, 0);
  return `${t.tripsLoaded} trips (${t.tripsReplaced} replaced), ${rejected} rejected, ${t.pointsKept}/${t.pointsRead} points kept`;
}

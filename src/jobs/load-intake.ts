import { splitForCells } from '../cells/split-step.js';
import { takeInMoves } from '../cells/move-step.js';
import { takeInForLoad } from '../intake/from-store.js';
import { expandInputs, landingFiles, type RefusedInput } from '../load/landing.js';
import { holdBackSettling } from '../load/quiet.js';
import type { LandingIntake } from '../load/report.js';
import { retakeChanged } from '../load/retake.js';
import { SliceRun } from '../load/slices.js';
import { batchUploads, uploadsInTurn, type UploadBatches } from '../load/uploads.js';
import type { LoadRun } from './load-run.js';
import { uploadLedger } from './load-uploads.js';

/** What a run takes: the files to derive, and what it found but leaves. */
export interface Listing {
  files: string[];
  /** A large partner file's slices among the files (null: none sliced, or not the landing area). */
  sliced: SliceRun | null;
  refused: RefusedInput[];
  intake: LandingIntake;
  batched: UploadBatches | null;
}

/**
 * The run's intake, before anything is listed: the uploads any API machine committed in
 * PostgreSQL (src/intake/), with cells the records of other cells' drivers sent to their cells
 * and the packages of drivers moved into this cell imported (src/cells/), and the SDK uploads put together into batch files (with the warehouse held, so
 * that no other load batches the same uploads).
 */
export async function takeInLanding(
  run: LoadRun,
): Promise<{ batched: UploadBatches | null; moved: Awaited<ReturnType<typeof takeInMoves>> }> {
  const { paths, beat, progress, options, now, settings } = run;
  if (!run.fromLanding) return { batched: null, moved: [] };
  await takeInForLoad(paths.landingDir, beat, progress);
  await splitForCells(paths.landingDir, options.dataDir, { quietMs: options.quietMs ?? 0, now }, progress);
  // with cells, the packages of drivers moved into this cell are imported (src/cells/move-import.ts)
  const moved = await takeInMoves(run.wh, paths, now, progress);
  beat.doing(`load: putting SDK uploads in ${paths.landingDir} together into batch files`);
  const batched = await batchUploads(
    paths.landingDir,
    options.uploadBatchBytes ?? settings.uploadBatchBytes,
    uploadLedger(run.wh.conn, now),
  );
  if (batched.files.length > 0) {
    const copies =
      batched.duplicates > 0
        ? ` (${batched.duplicates} byte-identical to an earlier upload or a loaded file, left out)`
        : '';
    progress(
      `load: ${batched.uploads} SDK upload file(s) put together into ${batched.files.length} batch file(s), ${(batched.bytes / 2 ** 20).toFixed(1)} MiB${copies}`,
    );
  }
  if (batched.staleTemps)
    progress(
      `load: ${batched.staleTemps} unfinished SDK upload .tmp file(s) over an hour old removed from ${paths.landingDir} (an API stopped while writing them; never answered 202)`,
    );
  if (batched.error)
    progress(`load: SDK uploads not all batched (${batched.error}): the rest load as files of their own`);
  return { batched, moved };
}

/**
 * The files this run derives: a file written since it was taken is taken again, whole; partner
 * files still within their quiet period wait; SDK uploads that came while the others were batched
 * wait for the next run; a large partner file goes a slice at a time, with the uploads.
 */
export async function listInputs(run: LoadRun, batched: UploadBatches | null): Promise<Listing> {
  const { paths, beat, progress, options, fromLanding } = run;
  beat.doing(`load: listing ${fromLanding ? paths.landingDir : 'the --input files'}`);
  const retaken = fromLanding ? retakeChanged(paths.landingDir) : [];
  for (const r of retaken)
    progress(
      `load: ${r.archived} was written after it was loaded (${r.bytesLoaded} -> ${r.bytesNow} bytes): taken again whole as ${r.back}`,
    );
  const listed = fromLanding ? landingFiles(paths.landingDir) : expandInputs(options.inputs ?? []);
  for (const r of listed.renamed ?? [])
    progress(`load: a landing file's name is not UTF-8 (${JSON.stringify(r.from)}): renamed ${r.to} to be taken`);
  const quiet = holdBackSettling(listed.files, fromLanding ? (options.quietMs ?? 0) : 0);
  if (quiet.settling.length > 0)
    progress(
      `load: ${quiet.settling.length} partner file(s) written within the last ${options.quietMs} ms left for a later run (maybe still being written)`,
    );
  const inTurn = uploadsInTurn(quiet.files, batched?.listed ?? null);
  const sliced = fromLanding
    ? await SliceRun.take(
        run.wh.conn,
        paths.landingDir,
        inTurn.files,
        {
          sliceBytes: options.sliceBytes ?? run.settings.sliceBytes,
          maxSlices: options.maxSlices ?? Number.POSITIVE_INFINITY,
          planAside: options.planSlicesAside ?? false,
          now: run.now,
        },
        (m) => progress(`load: ${m}`),
      )
    : null;
  const files = sliced?.files ?? inTurn.files;
  progress(`load: ${files.length} file(s) ${fromLanding ? `from ${paths.landingDir}` : 'given'}`);
  if (inTurn.later > 0)
    progress(`load: ${inTurn.later} SDK upload(s) that came while the others were batched wait for the next load`);
  for (const r of listed.refused)
    progress(`load: ${r.file}: not loaded, not a regular file (${r.kind}): never followed, left where it is`);
  return {
    files,
    sliced,
    refused: listed.refused,
    intake: {
      retaken: retaken.length,
      settling: quiet.settling.length,
      vanished: 0,
      renamed: listed.renamed?.length ?? 0,
    },
    batched,
  };
}

import { firstLine } from '../errors.js';
import { currentCell } from '../cell.js';
import { isMachineError } from '../machine-error.js';
import type { Progress } from '../progress.js';
import { resolveDatabaseUrl } from '../state/open.js';
import type { TakenIn } from './take-in.js';
import type { UploadBacklog } from './upload-queue.js';

// pg is loaded only with DATABASE_URL: every load and watch imports this module
const queueAt = async (url: string) => (await import('./upload-queue.js')).sharedUploadQueue(url);

/**
 * What the load takes in from PostgreSQL before it lists the landing area (src/jobs/load.ts): the
 * uploads any API machine accepted (with DATABASE_URL); null without DATABASE_URL, where the API
 * writes its uploads into this machine's landing area itself.
 */
export async function takeInAcceptedUploads(landingDir: string): Promise<TakenIn | null> {
  const url = resolveDatabaseUrl();
  if (!url) return null;
  const { takeInUploads } = await import('./take-in.js');
  return takeInUploads(await queueAt(url), landingDir, currentCell());
}

/**
 * The load's step (the warehouse held): takes in the uploads waiting in PostgreSQL. PostgreSQL not
 * answering leaves them waiting there for the next run, and the load goes on with what the landing
 * area holds; a full disk fails the load, as any landing write does.
 */
export async function takeInForLoad(
  landingDir: string,
  beat: { doing(line: string): void },
  progress: Progress,
): Promise<void> {
  if (!resolveDatabaseUrl()) return;
  beat.doing('load: taking in the SDK uploads waiting in PostgreSQL');
  try {
    const taken = await takeInAcceptedUploads(landingDir);
    if (taken?.uploads)
      progress(`load: ${taken.uploads} SDK upload(s) taken in from PostgreSQL (${taken.bytes} bytes)`);
  } catch (error) {
    if (isMachineError(error)) throw error;
    progress(`load: SDK uploads in PostgreSQL not taken in now (${firstLine(error)}): they wait for the next run`);
  }
}

/** The uploads waiting in PostgreSQL (the watch's poll and metrics); null without DATABASE_URL. */
export async function acceptedUploadsWaiting(): Promise<UploadBacklog | null> {
  const url = resolveDatabaseUrl();
  if (!url) return null;
  return (await queueAt(url)).backlog(currentCell());
}

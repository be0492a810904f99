import { basename, join } from 'node:path';
import { ServingPack, type PackOptions } from './pack.js';
import { verifyFiles, type Verification } from './checksum.js';
import { EXTRAS_SUFFIX, type Section } from './format.js';

/** What a manifest records of its serving pack (src/publish/manifest.ts): each section's layers and every file's SHA-256. */
export interface PackNames {
  files: Record<Section, string[]>;
  sha256?: Record<string, string>;
}

/** Where a file found damaged is reported (the API's list of damaged files, src/api/read/damaged-files.ts). */
export interface DamageSink {
  report(file: string, why: string, consequence?: string): void;
}

/** Why a snapshot is served by SQL although its manifest names a pack (stable codes, shown on /readyz). */
export type PackRefusal = 'pack_checksum_mismatch' | 'pack_not_verifiable' | 'pack_unreadable' | 'pack_read_failed';

/**
 * The manifest's serving pack, verified: each section file (indexes and rows) must have the
 * SHA-256 the manifest records before one byte of it is served. Otherwise null and the reason
 * (SQL serves this snapshot): a corrupt or changed file, a manifest without checksums (written by
 * an older version; the next publish records them), or a pack that cannot be opened (an older
 * format). The extras files (trip events, the largest part) are returned to be verified in the
 * background: until they are, trip details are answered by SQL.
 */
export async function openPack(
  publishedDir: string,
  pack: PackNames,
  options: PackOptions,
  label: string,
  damaged?: DamageSink,
): Promise<{ pack: ServingPack | null; refused: PackRefusal | null; extras: { path: string; sha256: string }[] }> {
  const log = options.log ?? (() => undefined);
  const sums = pack.sha256 ?? {};
  const main = Object.values(pack.files ?? {}).flat();
  const withSum = (n: string) => ({ path: join(publishedDir, n), sha256: sums[n] as string });
  if (main.length === 0 || main.flatMap((f) => [f, `${f}${EXTRAS_SUFFIX}`]).some((n) => typeof sums[n] !== 'string')) {
    log(
      `serve: serving pack of ${label} not used, SQL serves it: the manifest records no checksums (pack_not_verifiable)`,
    );
    return { pack: null, refused: 'pack_not_verifiable', extras: [] };
  }
  let opened: ServingPack | null = null;
  try {
    const check = await verifyFiles(main.map(withSum));
    if (check.mismatch) {
      log(
        `serve: serving pack of ${label} refused, SQL serves it: ${basename(check.mismatch)} does not match its checksum (pack_checksum_mismatch)`,
      );
      damaged?.report(check.mismatch, 'does not match its SHA-256', 'SQL answers its requests');
      return { pack: null, refused: 'pack_checksum_mismatch', extras: [] };
    }
    if (check.files > 0) log(`serve: serving pack of ${label}: ${describeCheck(check)}`);
    opened = ServingPack.open(publishedDir, pack.files, options);
    await opened.hold();
    return { pack: opened, refused: null, extras: main.map((f) => withSum(`${f}${EXTRAS_SUFFIX}`)) };
  } catch (error) {
    opened?.close();
    process.emitWarning(
      `serving pack not used, SQL serves this snapshot: ${error instanceof Error ? error.message.split('\n')[0] : String(error)} (pack_unreadable)`,
    );
    return { pack: null, refused: 'pack_unreadable', extras: [] };
  }
}

/** Where the verification of the extras reports: the snapshot's log and refusal (the first refusal's code stays), and its damaged files. */
export interface ExtrasReport {
  log(line: string): void;
  refuse(code: PackRefusal, line: string): void;
  damaged?: DamageSink;
}

/**
 * The pack's extras files (trip events) that openPack returned, verified against the manifest's
 * SHA-256 off the request path: trip details read them from the pack (`extrasTrusted`) only once
 * they match. A file that does not match refuses the pack (SQL serves the snapshot) and is
 * reported damaged; one that cannot be read refuses it too.
 */
export async function verifyExtras(
  pack: ServingPack,
  extras: { path: string; sha256: string }[],
  label: string,
  to: ExtrasReport,
): Promise<void> {
  try {
    const check = await verifyFiles(extras);
    if (check.mismatch) {
      to.refuse(
        'pack_checksum_mismatch',
        `serve: serving pack of ${label} refused, SQL serves it: ${basename(check.mismatch)} does not match its checksum (pack_checksum_mismatch)`,
      );
      to.damaged?.report(check.mismatch, 'does not match its SHA-256', 'SQL answers its requests');
      return;
    }
    if (check.files > 0) to.log(`serve: serving pack of ${label}: ${describeCheck(check, 'extras')}`);
    pack.extrasTrusted = true;
  } catch (error) {
    to.refuse(
      'pack_unreadable',
      `serve: serving pack of ${label} not used, SQL serves it: ${error instanceof Error ? error.message.split('\n')[0] : String(error)} (pack_unreadable)`,
    );
  }
}

export const describeCheck = (c: Verification, what = 'rows'): string => {
  const mb = c.bytes / 1e6;
  return `${what} verified: ${c.files} file(s), ${mb.toFixed(1)} MB in ${c.seconds.toFixed(2)} s (${(mb / Math.max(c.seconds, 1e-3)).toFixed(0)} MB/s)`;
};

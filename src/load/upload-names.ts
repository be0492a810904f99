import { randomUUID } from 'node:crypto';

/**
 * The name the API gives the landing file of one SDK upload (src/api/routes/sdk.ts): the upload's
 * time, so that files sort in arrival order, and a random id.
 */
export function uploadFileName(at: Date): string {
  return `sdk-${stamp(at)}-${randomUUID()}.ndjson`;
}

export const TIME = '\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-\\d{3}Z';
export const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** Exactly the API's upload names: a partner's file is never taken for one. */
export const UPLOAD = new RegExp(`^sdk-${TIME}-${UUID}\\.ndjson$`);
/** A batch file: named after its last upload's time, so it sorts where that upload did. */
export const BATCH = new RegExp(`^sdk-${TIME}-batch-\\d+-${UUID}\\.ndjson$`);

/**
 * Whether a landing file holds SDK uploads (one upload, or a batch of them): the names only the API
 * and the batching give. Its records cannot rewrite a trip (docs/decisions.md, Trip records (load), SDK re-sends, ops/load/resends.sql).
 */
export function isSdkUploadFile(name: string): boolean {
  return UPLOAD.test(name) || BATCH.test(name);
}

/** A file the batching made of several uploads (no batching takes it again). */
export function isBatchFile(name: string): boolean {
  return BATCH.test(name);
}

/** The API's file of an upload while it is written (src/api/routes/sdk.ts), before its rename. */
export const UPLOAD_TEMP = new RegExp(`^\\.sdk-${TIME}-${UUID}\\.ndjson\\.tmp$`);
/** `sdk-<time>` of an upload's name: where it sorts. */
export function timePrefix(name: string): string {
  return name.slice(0, 'sdk-'.length + 24);
}

/** An ISO instant with `-` for its `:` and `.` (`…T10-00-00-000Z`): no `:` in file names. */
function stamp(at: Date): string {
  return at.toISOString().replace(/[:.]/g, '-');
}

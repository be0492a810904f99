import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { writeFileAtomic } from '../fsutil.js';

/** An integrator deleted an account: the API writes one of these, the next job purges the data. */
export interface DeletionRequest {
  appId: string;
  platformUserId: number;
  orgUserId: string;
  requestedAt: string;
}

export function writeDeletionRequest(dir: string, request: DeletionRequest): void {
  writeFileAtomic(join(dir, `${request.requestedAt.replace(/[:.]/g, '-')}-${randomUUID()}.json`), JSON.stringify(request), 0o644);
}

export function readDeletionRequests(dir: string): { file: string; request: DeletionRequest }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .sort()
    .map((name) => ({ file: join(dir, name), request: JSON.parse(readFileSync(join(dir, name), 'utf8')) as DeletionRequest }));
}

export function removeDeletionRequests(files: string[]): void {
  for (const file of files) rmSync(file, { force: true });
}

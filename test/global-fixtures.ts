import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's folder for data folders built once per worker and shared by test files (helpers/built-folder.ts). */
    fixturesDir: string;
  }
}

// A folder of this run's own (other runs may share the machine's temp folder), removed when the
// run ends: the workers that build shared data folders into it are stopped without an exit handler.
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'dds-fixtures-'));
  project.provide('fixturesDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}

// What the code under test says on stderr in this process (the API's "serve: ..." lines about its
// snapshot, a job's progress, a damaged pack a test made) is what an operator reads; in a test that
// passes it reads like a failure. Those lines are kept, per file, and printed only when a test of
// the file fails, before its report. Anything else on stderr (a Node warning among it) goes through
// as before, and child processes' stderr is the tests' own to capture.
import { afterAll, beforeAll, beforeEach } from 'vitest';

const SAID =
  /^(\d{2}:\d{2}:\d{2} )?(serve|load|score|export|purge|deliver|demo|generate|state|webhooks|apps|backup|restore|quarantine|sql|bench)( [a-z-]+)?: /;

type Write = (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
interface Quiet {
  write: Write;
  kept: string[];
  failed: boolean;
}

// one per worker process: a worker runs file after file (isolate: false), each running this file
const holder = globalThis as typeof globalThis & { quietStderr?: Quiet };
const quiet: Quiet =
  holder.quietStderr ??
  (() => {
    const state: Quiet = { write: process.stderr.write.bind(process.stderr) as Write, kept: [], failed: false };
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (state.failed || !SAID.test(text)) return state.write(chunk, ...rest);
      state.kept.push(text);
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof process.stderr.write;
    holder.quietStderr = state;
    return state;
  })();

beforeAll(() => {
  quiet.kept = [];
  quiet.failed = false;
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    // what this file said so far, then the rest as it comes
    if (!quiet.failed) quiet.write(quiet.kept.join(''));
    quiet.failed = true;
    quiet.kept = [];
  });
});

afterAll(() => {
  quiet.kept = [];
  quiet.failed = false;
});

// Docs as tests: README.md's shell blocks run as written, top to bottom, against a running demo.
//
// The rule for which blocks run: every ```sh block runs, in order, in one bash session (so a
// variable set in one block is there in the next, as in a reader's terminal), unless its first line
// is `# not run` (the two install commands, a partner's file that does not exist, the benchmarks).
// Output a reader only looks at is fenced ```console or ```json, never ```sh.
//
// What the test changes, and only that: the demo is smaller and on a free port (the README's
// `127.0.0.1:8080` is rewritten to it); the working directory is a copy of the repository's (links
// to jobs/, dist/, sql/, examples/, ...) whose `data` is the demo's temp folder; and the README's
// webhook endpoint, a receiver on this machine at port 8081, becomes the test's own receiver on a
// free loopback port (the demo and deliver.js allow loopback endpoints, as the README says).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const repo = resolve(import.meta.dirname, '../..');
const readme = readFileSync(join(repo, 'README.md'), 'utf8');

/** The ```sh blocks of a markdown text, each with whether it is meant to run. */
function shellBlocks(markdown: string): { code: string; runs: boolean }[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => {
    const code = m[1] as string;
    return { code, runs: !code.startsWith('# not run') };
  });
}

function runBash(script: string, cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.once('close', (status) => done({ status, stdout, stderr }));
  });
}

const root = mkdtempSync(join(tmpdir(), 'dds-readme-'));
const data = join(root, 'data');
const work = join(root, 'work');
let demo: ChildProcess | undefined;
let receiver: Receiver;
let port = 0;
/** What the working folder links to in the repository (with `data`, the demo's folder). */
const LINKED = ['jobs', 'dist', 'sql', 'examples', 'src', 'node_modules', 'package.json'];

beforeAll(async () => {
  receiver = await startReceiver(() => ({ status: 204 }), '/driving');
  mkdirSync(work);
  for (const name of LINKED) symlinkSync(join(repo, name), join(work, name));
  symlinkSync(data, join(work, 'data'));
  // `npm start` as the README says, smaller and on a free port: 3 drivers (the README deletes
  // driver-00003) x 4 days, the fewest in which driver-00001 has the 3 trips the README's second
  // page needs whatever the weekday (at least 4 with the generator's seed); each day is a file the
  // demo's load derives, about half a second of CPU each
  demo = spawn(process.execPath, ['jobs/demo.js', '--users', '3', '--days', '4', '--port', '0', '--data-dir', data], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DRIVING_WEBHOOK_ALLOW_LOOPBACK: '1' },
  });
  let out = '';
  let err = '';
  demo.stdout?.setEncoding('utf8');
  demo.stderr?.setEncoding('utf8');
  demo.stderr?.on('data', (chunk: string) => {
    err += chunk;
  });
  port = await new Promise<number>((done, fail) => {
    demo?.stdout?.on('data', (chunk: string) => {
      out += chunk;
      const m = /serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) done(Number(m[1]));
    });
    demo?.once('exit', (code) => fail(new Error(`demo exited ${code}: ${out}${err}`)));
  });
});

afterAll(async () => {
  if (demo && demo.exitCode === null) {
    demo.kill('SIGTERM');
    await new Promise((done) => demo?.once('exit', done));
  }
  await receiver?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('README.md', () => {
  it('marks the blocks that do not run, and the ones that run need nothing filled in', () => {
    const blocks = shellBlocks(readme);
    expect(blocks.filter((b) => b.runs).length).toBeGreaterThanOrEqual(5);
    expect(blocks.filter((b) => !b.runs).length).toBeGreaterThanOrEqual(1);
    for (const b of blocks.filter((x) => x.runs))
      expect(b.code, 'a <placeholder> to fill in').not.toMatch(/<[a-zA-Z][^>]*>/);
  });

  it('stays a front door of at most 2,500 words', () => {
    expect(readme.split(/\s+/).filter(Boolean).length).toBeLessThanOrEqual(2500);
  });

  it('runs every shell block as written against the demo: each command exits 0 and each curl answers 2xx', async () => {
    const script = ['set -euo pipefail']; // -e: any command failing ends the run; curl -f fails on 4xx/5xx
    shellBlocks(readme).forEach((b, i) => {
      if (!b.runs) return;
      script.push(`echo "### README shell block ${i + 1}" >&2`);
      script.push(
        b.code
          .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
          .replaceAll('http://127.0.0.1:8081/driving', receiver.url),
      );
    });
    // asynchronously: the receiver answers from this process's event loop while bash runs
    const run = await runBash(script.join('\n'), work);
    const where = `${run.stderr
      .split('\n')
      .filter((l) => l.startsWith('###'))
      .pop()}\n${run.stderr.slice(-3000)}`;
    expect(run.status, where).toBe(0);
    // what the blocks did happened: the second page, the receiver's test event, the export
    expect(run.stdout).toContain('"nextCursor"');
    expect(run.stdout).toMatch(/"delivered":true/);
    expect(receiver.received.length).toBeGreaterThanOrEqual(2); // the test event, then the jobs' events
    expect(run.stdout).toMatch(/"accepted":1/);
    // what the blocks write goes under data/ (or a temp folder), never beside the repository's files
    expect(readdirSync(work).sort()).toEqual([...LINKED, 'data'].sort());
  });
});

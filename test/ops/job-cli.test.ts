// Every job's command line as a real process: --help exits 0 and names every flag and sub-command,
// each of which docs/jobs.md documents in the job's section; every job takes --data-dir; a port
// already taken is found before any work (a real listener on a free port).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { withNpmPort } from '../../src/jobs/main/demo.js';
import { ROOT, runJobProcess, type Ran } from '../helpers/job-process.js';

const JOBS = [
  'apps',
  'bench',
  'cells',
  'deliver',
  'demo',
  'export',
  'generate',
  'load',
  'purge',
  'quarantine',
  'score',
  'serve',
  'sql',
  'webhooks',
];
const TMP = mkdtempSync(join(tmpdir(), 'dds-job-cli-'));
const EMPTY = join(TMP, 'no-apps');
const DOC = readFileSync(join(ROOT, 'docs', 'jobs.md'), 'utf8');

beforeAll(() => mkdirSync(EMPTY));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** The `--flags` of a help text's Options section, and the commands of its Commands section. */
function helpOf(text: string): { flags: string[]; commands: string[] } {
  const section = (name: string) => {
    const lines = text.split('\n');
    const start = lines.indexOf(`${name}:`);
    if (start < 0) return [];
    const end = lines.findIndex((l, i) => i > start && l.trim() === '');
    return lines.slice(start + 1, end < 0 ? undefined : end);
  };
  const flags = section('Options').flatMap((l) => /^ {2}(--[a-z][a-z-]*)/.exec(l)?.[1] ?? []);
  const commands = section('Commands').flatMap((l) => /^ {2}\S+ ([a-z][a-z-]*)/.exec(l)?.[1] ?? []);
  return { flags, commands };
}

/** The part of docs/jobs.md about one job: from `### <job>.js` to the next heading. */
function docSection(job: string): string {
  const start = DOC.indexOf(`\n### ${job}.js`);
  expect(start, `docs/jobs.md has a section ### ${job}.js`).toBeGreaterThan(0);
  const next = DOC.slice(start + 1).search(/\n#{2,3} /);
  return DOC.slice(start, next < 0 ? undefined : start + 1 + next);
}

const GLOBAL = ['--data-dir', '--json', '--help'];
/** Taken by every job that reads or writes the shared state store, documented once for them all. */
const STATE_STORE = '--database-url';
/** Taken with the state store, documented once for every job (docs/jobs.md). */
const CELL = '--cell';
const STATE_JOBS = [
  'apps',
  'cells',
  'deliver',
  'demo',
  'export',
  'generate',
  'load',
  'purge',
  'quarantine',
  'score',
  'serve',
  'webhooks',
];

describe('--help of every job', () => {
  it("exits 0 and names every flag and sub-command, each documented in the job's section of docs/jobs.md", async () => {
    const helps = await Promise.all(JOBS.map((job) => runJobProcess(job, ['--help'])));
    const parsed = JOBS.map((job, i) => ({ job, ran: helps[i] as Ran, ...helpOf((helps[i] as Ran).stdout) }));
    // a command's own flags are in its own --help
    const pairs = parsed.flatMap(({ job, commands }) => commands.map((c) => [job, c] as const));
    const commandHelps = await Promise.all(pairs.map(([job, c]) => runJobProcess(job, [c, '--help'])));
    expect(pairs.map(([job, c]) => `${job} ${c}`)).toEqual([
      'apps add',
      'apps list',
      'apps rotate-key',
      'apps revoke-key',
      'apps rotate-secret',
      'apps set-webhook',
      'cells list',
      'cells close',
      'cells open',
      'cells move',
      'quarantine list',
      'quarantine show',
      'webhooks counts',
      'webhooks list',
      'webhooks show',
      'webhooks replay',
    ]);
    for (const { job, ran, flags, commands } of parsed) {
      expect(ran.code, `${job}: ${ran.stderr}`).toBe(0);
      expect(ran.stdout.split('\n')[0]).toMatch(new RegExp(`^${job} \\S`));
      expect(flags, job).toEqual(expect.arrayContaining(GLOBAL));
      const section = docSection(job);
      const own = new Set(flags);
      for (const c of commands) {
        const h = commandHelps[pairs.findIndex(([j, k]) => j === job && k === c)] as Ran;
        expect(h.code, `${job} ${c} --help`).toBe(0);
        for (const f of helpOf(h.stdout).flags) own.add(f);
        expect(section, `docs/jobs.md, ${job}.js: command ${c}`).toContain(`\`${c}`);
      }
      expect(flags.includes(STATE_STORE), `${job}: ${STATE_STORE}`).toBe(STATE_JOBS.includes(job));
      expect(flags.includes(CELL), `${job}: ${CELL}`).toBe(STATE_JOBS.includes(job));
      for (const flag of own) {
        if (GLOBAL.includes(flag) || flag === STATE_STORE || flag === CELL) continue;
        expect(section, `docs/jobs.md, ${job}.js: ${flag}`).toMatch(new RegExp(`${flag}(?![a-z-])`));
      }
    }
    // the global flags are documented once, for every job
    for (const flag of [...GLOBAL, STATE_STORE, CELL])
      expect(DOC.slice(0, DOC.indexOf('## Exit codes'))).toContain(`\`${flag}`);
    // 25 node processes: minutes on a busy 2-core machine, hence the long timeout
  }, 300_000);

  it('lists every sub-command in a usage error, revoke-key included', async () => {
    const r = await runJobProcess('apps', ['frobnicate', '--data-dir', EMPTY]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'apps: Unknown argument: frobnicate; commands: add, list, rotate-key, revoke-key, rotate-secret, set-webhook (see --help)\n',
    );
    const q = await runJobProcess('quarantine', ['frobnicate', '--data-dir', EMPTY]);
    expect(q.stderr).toBe('quarantine: Unknown argument: frobnicate; commands: list, show (see --help)\n');
  });

  it('lists the allowed values of a flag with choices in its usage error', async () => {
    const runs = await Promise.all([
      runJobProcess('webhooks', ['list', '--status', 'dead', '--data-dir', EMPTY]),
      runJobProcess('generate', ['--format', 'csv', '--data-dir', EMPTY]),
      runJobProcess('serve', ['--serving', 'cache', '--data-dir', EMPTY]),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2]);
    expect(runs[0]?.stderr).toContain('Argument: status, Given: "dead", Choices: "pending", "failed", "delivered"');
    expect(runs[1]?.stderr).toContain('Argument: format, Given: "csv", Choices: "ndjson", "parquet"');
    expect(runs[2]?.stderr).toContain('Argument: serving, Given: "cache", Choices: "pack", "sql"');
  });
});

describe('--data-dir', () => {
  it('is taken by every job: each reads the folder given (here one without apps, or without an export); one without apps is refused in one line with the hint, nothing created', async () => {
    const noApps = `data folder ${EMPTY} holds no apps (no state store)`;
    const runs: [string, string[], number, string][] = [
      ['apps', ['list'], 2, noApps],
      ['webhooks', ['counts'], 2, noApps],
      ['quarantine', ['list'], 2, noApps],
      ['load', [], 2, noApps],
      ['score', [], 2, noApps],
      ['purge', [], 2, noApps],
      ['export', [], 2, noApps],
      ['generate', ['--users', '1', '--days', '1'], 2, noApps],
      ['deliver', ['--once'], 2, noApps],
      ['serve', ['--port', '0'], 2, noApps],
      [
        'sql',
        ['--file', 'sql/analyses/users.sql'],
        2,
        `no export at ${join(EMPTY, 'exports')}: write one with node jobs/export.js`,
      ],
    ];
    const results = await Promise.all(runs.map(([job, args]) => runJobProcess(job, [...args, '--data-dir', EMPTY])));
    // a folder without apps (a mistyped --data-dir): one line naming the folder and how to create an
    // app, no stack trace, and nothing created in it (no empty warehouse, no export, no passport)
    const hint = new RegExp(
      `failed: data folder ${EMPTY} holds no apps \\(no state store\\): check --data-dir .*apps.js add --name NAME --data-dir ${EMPTY}`,
    );
    for (const [i, [job, , code, said]] of runs.entries()) {
      const r = results[i] as Ran;
      expect({ job, code: r.code }).toEqual({ job, code });
      expect(r.stderr, job).toContain(said);
      expect(r.stderr, job).not.toMatch(/^\s+at |node:internal/m);
      if (said !== noApps) continue;
      const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
      expect(
        lines.filter((l) => hint.test(l)),
        `${job}: ${r.stderr}`,
      ).toHaveLength(1);
    }
    expect(readdirSync(EMPTY)).toEqual([]);
    // the bench's --data-dir is its own work folder: one it did not make is never emptied
    const kept = join(TMP, 'not-the-bench-s');
    mkdirSync(kept);
    writeFileSync(join(kept, 'apps.json'), '{}');
    const bench = await runJobProcess('bench', ['--data-dir', kept]);
    expect(bench.code).toBe(2);
    expect(bench.stderr).toContain(`bench: failed: --data-dir ${kept} is not empty and was not made by the bench`);
    expect(readFileSync(join(kept, 'apps.json'), 'utf8')).toBe('{}');
  }, 300_000);
});

describe('a port already taken', () => {
  let listener: Server;
  let port = 0;
  beforeAll(async () => {
    listener = createServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => listener.close(resolve));
  });

  it('ends a second npm start before any work: exit 3, one line with the hint, nothing generated', async () => {
    const dir = join(TMP, 'demo');
    const r = await runJobProcess('demo', ['--data-dir', dir, '--port', String(port)]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `demo: failed: port ${port} on 127.0.0.1 is in use (another npm start?); stop it or pass --port N\n`,
    );
    expect(r.stdout).toBe('');
    // no app created, nothing generated or loaded
    expect(existsSync(dir)).toBe(false);
    // --no-serve does not need the port
    const help = await runJobProcess('demo', ['--help']);
    expect(help.stdout).toContain('--port');
  });

  it('takes the port of `npm start --port N` as npm passes it, and its hint says the form npm keeps: npm start -- --port', async () => {
    const dir = join(TMP, 'npm-start');
    // npm keeps a --port before `--` for itself (npm_config_port=true) and passes the number on bare
    const npm = (args: string[]) =>
      new Promise<Ran>((resolve) => {
        const env = { ...process.env };
        delete env['DRIVING_DATA_DIR'];
        const child = spawn('npm', ['start', ...args], { cwd: ROOT, env });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    const hint = `demo: failed: port ${port} on 127.0.0.1 is in use (another npm start?); stop it or run npm start -- --port 8081\n`;
    for (const args of [
      ['--port', String(port), '--', '--data-dir', dir],
      ['--', '--port', String(port), '--data-dir', dir],
    ]) {
      const r = await npm(args);
      expect(r.code, `npm start ${args.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toContain(hint);
    }
    expect(existsSync(dir)).toBe(false);
    expect(withNpmPort(['8081', '--days', '2'], { lifecycleEvent: 'start', configPort: 'true' })).toEqual([
      '--port',
      '8081',
      '--days',
      '2',
    ]);
    expect(withNpmPort([], { lifecycleEvent: 'start', configPort: '8082' })).toEqual(['--port', '8082']);
    expect(withNpmPort(['--port', '9000'], { lifecycleEvent: 'start', configPort: '8082' })).toEqual([
      '--port',
      '9000',
    ]);
    expect(withNpmPort(['8081'], {})).toEqual(['8081']);
  });

  it('ends serve.js before it opens anything: exit 3, one line; --json gives it as JSON', async () => {
    const dir = join(TMP, 'serve');
    await new AppStore(pathsFor(dir).appsFile).add({ name: 'x', timeZone: 'UTC' });
    const r = await runJobProcess('serve', ['--data-dir', dir, '--port', String(port), '--no-log']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `serve: failed: port ${port} on 127.0.0.1 is in use (another serve.js or npm start?); stop it or pass --port N\n`,
    );
    // the passport store, which the API opens first, was not created
    expect(existsSync(pathsFor(dir).passportFile)).toBe(false);
    const json = await runJobProcess('serve', ['--data-dir', dir, '--port', String(port), '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      job: 'serve',
      exitCode: 3,
      error: `port ${port} on 127.0.0.1 is in use (another serve.js or npm start?); stop it or pass --port N`,
    });
  });

  it('a PostgreSQL state store that does not answer: exit 3, one line naming the address', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    mkdirSync(join(TMP, 'pg-down'));
    const r = await runJobProcess('apps', [
      'list',
      '--data-dir',
      join(TMP, 'pg-down'),
      '--database-url',
      `postgres://driving@127.0.0.1:${port}/none`,
    ]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toBe(`apps list: failed: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });

  it('is not in the way once free: the probe lets go of the port it tried', async () => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const freePort = (free.address() as { port: number }).port;
    await new Promise((resolve) => free.close(resolve));
    const { assertPortFree } = await import('../../src/jobs/port-free.js');
    await assertPortFree(freePort, '127.0.0.1', 'x');
    // the same port can be listened on right after the probe
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(freePort, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => again.close(resolve));
    await expect(assertPortFree(port, '127.0.0.1', 'x')).rejects.toMatchObject({
      code: 'EADDRINUSE',
      message: `port ${port} on 127.0.0.1 is in use (x); stop it or pass --port N`,
    });
  });
});

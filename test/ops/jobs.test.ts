// Every command-line job as a real process, failure mode by failure mode: the exit code of the
// rule in docs/jobs.md (0 done, 1 internal, 2 bad input or usage, 3 busy, 4 a check stopped a
// publish) and one line on stderr saying what went wrong, never a stack trace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { runDemo } from '../../src/jobs/demo.js';
import { runExport } from '../../src/jobs/export.js';
import { pathsFor } from '../../src/data-folder.js';
import { AppStore } from '../../src/apps/store.js';
import { openDatabase } from '../../src/db/open.js';
import { run } from '../../src/db/sql.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TMP = mkdtempSync(join(tmpdir(), 'dds-jobs-'));
/** A data folder with the demo's app, trips and scores, published (built once; copied to be changed). */
const DATA = join(TMP, 'data');
const EXPORT = join(TMP, 'export');
let appId = '';
const children: ChildProcess[] = [];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(
  job: string,
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<Ran>; stderr: () => string } {
  // the data folder and the loopback opt-in come from the flags and `env` only, never the caller's shell
  const base = { ...process.env };
  delete base['DRIVING_DATA_DIR'];
  delete base['DRIVING_WEBHOOK_ALLOW_LOOPBACK'];
  const child = spawn(process.execPath, [`jobs/${job}.js`, ...args], { cwd: ROOT, env: { ...base, ...env } });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Ran>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, stderr: () => stderr };
}

const job = (name: string, args: string[], env: Record<string, string> = {}): Promise<Ran> =>
  start(name, args, env).done;

/** The failure is said in exactly one line of its own, `<job>: ...`, and no stack trace anywhere. */
function failedWith(r: Ran, code: number, line: RegExp): void {
  expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code });
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
  expect(
    lines.filter((l) => line.test(l)),
    r.stderr,
  ).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toMatch(/Error: .*\n.*node:internal/);
}

function copyOfData(name: string): string {
  const dir = join(TMP, name);
  cpSync(DATA, dir, { recursive: true });
  return dir;
}

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not seen in time: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A process holding a DuckDB file open (read-write) until its stdin closes: another job's lock. */
async function holdDatabase(file: string): Promise<ChildProcess> {
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const i = await DuckDBInstance.create(${JSON.stringify(file)});
    await i.connect(); console.log('holding'); process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`,
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.push(holder);
  await new Promise<void>((resolve) => holder.stdout?.once('data', () => resolve()));
  return holder;
}

beforeAll(async () => {
  // 3 drivers x 2 days: each has a trip whatever the weekday; each day is a file the load derives
  const demo = await runDemo({ dataDir: DATA, users: 3, days: 2 });
  appId = demo.appId;
  await runExport({ dataDir: DATA, out: EXPORT });
}, 300_000);

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(TMP, { recursive: true, force: true });
});

describe('a data folder that holds no apps (a mistyped --data-dir)', () => {
  // every job refusing a folder without apps (exit 2, the one line with the hint, nothing created in
  // it) is job-cli.test.ts's --data-dir test: the same runs of the same jobs on an empty folder
  it('that does not exist is named as such, and is not created (exit 2)', async () => {
    const missing = join(TMP, 'typo');
    failedWith(await job('export', ['--data-dir', missing]), 2, new RegExp(`data folder ${missing} does not exist`));
    const { existsSync } = await import('node:fs');
    expect(existsSync(missing)).toBe(false);
  });

  it('is where apps add creates the first app (exit 0)', async () => {
    const fresh = join(TMP, 'fresh');
    const r = await job('apps', ['add', '--name', 'First', '--data-dir', fresh, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, appId: expect.stringMatching(/^app_/) });
    expect(await new AppStore(pathsFor(fresh).appsFile).list()).toHaveLength(1);
  });
});

describe.concurrent('usage errors (exit 2, one line, no stack)', () => {
  // --help of every job (exit 0, the usage line first): job-cli.test.ts, with every flag it names
  it('names only the unknown command of apps and webhooks, and lists the commands', async () => {
    const apps = await job('apps', ['frobnicate', '--data-dir', DATA]);
    failedWith(
      apps,
      2,
      /^apps: Unknown argument: frobnicate; commands: add, list, rotate-key, revoke-key, rotate-secret, set-webhook \(see --help\)$/,
    );
    const hooks = await job('webhooks', ['frobnicate', '--data-dir', DATA]);
    failedWith(
      hooks,
      2,
      /^webhooks: Unknown argument: frobnicate; commands: counts, list, show, replay \(see --help\)$/,
    );
    failedWith(await job('apps', ['--data-dir', DATA]), 2, /^apps: a command is needed; commands: add, /);
  });

  it('apps set-webhook to a loopback host names the switch that allows it for local testing; to a private one it does not', async () => {
    const { appId } = (await new AppStore(pathsFor(DATA).appsFile).list())[0] as { appId: string };
    failedWith(
      await job('apps', ['set-webhook', appId, 'https://127.0.0.1/hook', '--data-dir', DATA], {
        DRIVING_WEBHOOK_ALLOW_LOOPBACK: '',
      }),
      2,
      /^apps set-webhook: failed: --webhook-url refused: 127\.0\.0\.1 is a loopback address \(for local testing, .*DRIVING_WEBHOOK_ALLOW_LOOPBACK=1 .*\)$/,
    );
    const privateHost = await job('apps', ['set-webhook', appId, 'https://10.0.0.1/hook', '--data-dir', DATA], {
      DRIVING_WEBHOOK_ALLOW_LOOPBACK: '',
    });
    failedWith(privateHost, 2, /^apps set-webhook: failed: --webhook-url refused: 10\.0\.0\.1 is a private address$/);
  });

  it('refuses values that are not numbers or out of range', async () => {
    const runs = await Promise.all([
      job('serve', ['--port', 'abc', '--data-dir', DATA]),
      job('serve', ['--port', '70000', '--data-dir', DATA]),
      job('demo', ['--port', 'abc', '--data-dir', DATA]),
      job('deliver', ['--once', '--concurrency', '0', '--data-dir', DATA]),
      job('bench', ['--size', 'huge']),
      job('load', ['--since', '2026-11-01', '--data-dir', DATA]),
      job('generate', ['--users', '0', '--data-dir', DATA]),
      job('score', ['--date', '2026-13-45', '--data-dir', DATA]),
      job('score', ['--from', '2026-11-01', '--data-dir', DATA]),
      job('apps', ['add', '--name', 'x', '--time-zone', 'Mars/Olympus', '--data-dir', DATA]),
      job('apps', ['rotate-key', 'app_nosuch', '--data-dir', DATA]),
      job('load', ['--input', join(TMP, 'no-such-file.ndjson'), '--data-dir', DATA]),
    ]);
    const said = [
      /^serve: --port must be a whole number from 0 to 65535 \(see --help\)$/,
      /^serve: --port must be a whole number from 0 to 65535/,
      /^demo: --port must be a whole number from 0 to 65535/,
      /^deliver: --concurrency must be a whole number of at least 1/,
      /^bench: Invalid values: Argument: size, Given: "huge", Choices: "small", "full" \(see --help\)$/,
      /^load: --since: only with --rederive/,
      /^generate: failed: --users must be an integer from 1 to 1000000$/,
      /^score: failed: --date must be a date YYYY-MM-DD, got '2026-13-45'$/,
      /^score: failed: --from and --to go together$/,
      /^apps add: failed: --time-zone 'Mars\/Olympus' is not an IANA time zone$/,
      /^apps rotate-key: failed: no app with appId 'app_nosuch'$/,
      /^load: failed: --input .*no-such-file.ndjson: no such file or folder$/,
    ];
    runs.forEach((r, i) => failedWith(r, 2, said[i] as RegExp));
  });

  it('export --out naming a file: exit 2, the file untouched', async () => {
    const file = join(TMP, 'not-a-folder.txt');
    writeFileSync(file, 'keep');
    failedWith(
      await job('export', ['--out', file, '--data-dir', DATA]),
      2,
      /^export: failed: --out .*not-a-folder.txt is a file, not a folder/,
    );
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(file, 'utf8')).toBe('keep');
  });

  it('export --out inside the data folder but not its exports/ folder, or holding the data folder: exit 2 naming the rule, nothing written', async () => {
    for (const out of [join(DATA, 'analyst'), join(DATA, 'exports', 'mine'), DATA]) {
      failedWith(
        await job('export', ['--out', out, '--data-dir', DATA]),
        2,
        /^export: failed: --out .* is inside the data folder .*: an export inside the data folder goes to its exports\/ folder \(the default\), which the purge of a deleted account writes again/,
      );
    }
    expect(existsSync(join(DATA, 'analyst'))).toBe(false);
    expect(existsSync(join(DATA, 'exports', 'mine'))).toBe(false);
    failedWith(
      await job('export', ['--out', TMP, '--data-dir', DATA]),
      2,
      /^export: failed: --out .* holds the data folder .*: give a folder outside the data folder$/,
    );
    expect(existsSync(DATA)).toBe(true);
  });

  it('score asks for --yes before a backfill of more than 366 days, and shows a long one in a few lines', async () => {
    failedWith(
      await job('score', ['--from', '2020-01-01', '--to', '2026-11-20', '--data-dir', DATA]),
      2,
      /^score: failed: --from 2020-01-01 --to 2026-11-20 covers 2516 days .*more than 366 days runs only with --yes$/,
    );
    const dir = copyOfData('backfill');
    // 40 dates without a terminal: a line at the start, at every tenth, at the end; not one a day
    const r = await job('score', ['--from', '2026-10-01', '--to', '2026-11-09', '--data-dir', dir]);
    expect(r.code).toBe(0);
    const steps = r.stderr.split('\n').filter((l) => / score: \d+\/40 /.test(l));
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps.length).toBeLessThanOrEqual(14);
    expect(steps[steps.length - 1]).toMatch(/score: 40\/40 \(100%\)/);
    // the demo's trips are of the last days: these dates may have nothing to score, which is said first
    expect(r.stdout).toMatch(/^score: (nothing to score: [^;]*; )?40 run\(s\) as of 2026-10-01\.\.2026-11-09/);
  });
});

describe.concurrent('sql.js', () => {
  const STATS = ['--parquet', EXPORT, '--file', 'sql/models/marts/statistics_periods.sql'];

  it('says which --param is missing or unknown (exit 2), and what is not an export or a file', async () => {
    const runs = await Promise.all([
      job('sql', [...STATS, '--param', `app_id=${appId}`, '--param', 'user_id=1']),
      job('sql', ['--parquet', EXPORT, '--file', 'sql/analyses/users.sql', '--param', 'userid=5']),
      job('sql', ['--parquet', TMP, '--file', 'sql/analyses/users.sql']),
      job('sql', ['--parquet', EXPORT, '--file', join(TMP, 'missing.sql')]),
      job('sql', [
        ...STATS,
        '--param',
        `app_id=${appId}`,
        '--param',
        'user_id=1',
        '--param',
        'period=fortnight',
        '--param',
        'start_date=2026-11-01',
        '--param',
        'end_date=yesterday',
      ]),
      job('sql', [
        ...STATS,
        '--param',
        `app_id=${appId}`,
        '--param',
        'user_id=driver-00001',
        '--param',
        'period=week',
        '--param',
        'start_date=2026-11-01',
        '--param',
        'end_date=2026-11-30',
      ]),
    ]);
    failedWith(
      runs[0] as Ran,
      2,
      /^sql: failed: sql\/models\/marts\/statistics_periods.sql needs --param start_date=\.\.\. --param end_date=\.\.\. --param period=\.\.\.$/,
    );
    failedWith(
      runs[1] as Ran,
      2,
      /^sql: failed: sql\/analyses\/users.sql has no parameter \$userid \(it takes: none\)$/,
    );
    failedWith(runs[2] as Ran, 2, /^sql: failed: --parquet .*: not an export folder \(no apps.parquet\)$/);
    failedWith(runs[3] as Ran, 2, /^sql: failed: --file .*missing.sql: cannot read it$/);
    failedWith(runs[4] as Ran, 2, /^sql: failed: sql\/models\/marts\/statistics_periods.sql: Conversion Error: /);
    // the value that did not convert is named with its parameter and the type the file gives it
    expect((runs[4] as Ran).stderr).toContain(': --param end_date=yesterday must be a DATE ($end_date in this file)');
    // the API's id where the numeric user id goes: where to find the one to pass
    failedWith(
      runs[5] as Ran,
      2,
      /^sql: failed: sql\/models\/marts\/statistics_periods.sql: Conversion Error: .*--param user_id=driver-00001 must be a BIGINT \(\$user_id in this file\); user_id is the numeric user id: sql\/analyses\/users.sql lists it beside each org_user_id/,
    );
  });

  it('lists the users to pass, and a user_id that matches nothing is said with ids that do (exit 0)', async () => {
    const users = await job('sql', ['--parquet', EXPORT, '--file', 'sql/analyses/users.sql', '--json']);
    expect(users.code).toBe(0);
    const rows = JSON.parse(users.stdout).rows as { app_id: string; user_id: string; trips: number }[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((u) => u.app_id === appId && u.trips > 0)).toBe(true);
    const known = rows[0]?.user_id as string;

    const params = [
      '--param',
      `app_id=${appId}`,
      '--param',
      'period=month',
      '--param',
      'start_date=2020-01-01',
      '--param',
      'end_date=2030-12-31',
    ];
    const nobody = await job('sql', [...STATS, ...params, '--param', 'user_id=123']);
    expect(nobody.code).toBe(0);
    expect(nobody.stderr).toMatch(
      new RegExp(`^sql: note: user_id=123 has no trips in app ${appId} in this export .*some that do: ${known}`, 'm'),
    );
    const someone = await job('sql', [...STATS, ...params, '--param', `user_id=${known}`, '--json']);
    expect(someone.code).toBe(0);
    expect(someone.stderr).not.toMatch(/note:/);
    // the months hold exactly the user's trips
    const months = JSON.parse(someone.stdout).rows as { count_trips: number }[];
    expect(months.reduce((a, m) => a + m.count_trips, 0)).toBeGreaterThan(0);
    // CSV on stdout only: the summary goes to stderr
    const csv = await job('sql', ['--parquet', EXPORT, '--file', 'sql/analyses/users.sql']);
    expect(csv.stdout.split('\n')[0]).toBe('app_id,user_id,org_user_id,trips,first_day,last_day');
    expect(csv.stdout).not.toMatch(/row\(s\)/);
    expect(csv.stderr).toMatch(/^sql: \d+ row\(s\)$/m);
  });

  it('ends quietly when its reader closes the pipe (sql.js | head)', async () => {
    const big = join(TMP, 'big.sql');
    // 30,000 rows of CSV (1.7 MB), many times a pipe's buffer: the job still writes after the reader left
    writeFileSync(big, "-- many rows\nselect range as n, repeat('x', 50) as pad from range(30000)\n");
    const { child, done } = start('sql', ['--parquet', EXPORT, '--file', big]);
    child.stdout?.once('data', () => child.stdout?.destroy());
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/EPIPE|^\s+at /m);
  });
});

// This describe and the two above run at once (each test too): the warehouse holder's test waits
// 8 s for its jobs to give up, while the usage errors and sql.js run beside it. None writes DATA.
describe.concurrent('busy resources (exit 3) and the wait before it', () => {
  it('load, score and export wait for a job holding the warehouse, naming it at once and every few seconds, then exit 3', async () => {
    const dir = copyOfData('busy-warehouse');
    const holder = await holdDatabase(pathsFor(dir).warehouseFile);
    try {
      const env = { DRIVING_WAREHOUSE_LOCK_WAIT_MS: '8000' };
      const runs = await Promise.all(['load', 'score', 'export'].map((name) => job(name, ['--data-dir', dir], env)));
      for (const [i, r] of runs.entries()) {
        const name = ['load', 'score', 'export'][i] as string;
        failedWith(
          r,
          3,
          new RegExp(
            `^${name}: failed: .*warehouse.duckdb is in use by another process, PID ${holder.pid} \\(node -e .*\\); try again when it has finished$`,
          ),
        );
        const waits = r.stderr.split('\n').filter((l) => l.includes(`waiting for PID ${holder.pid} (node -e`));
        // at once, then every 5 s: two within the 8 s wait (a third would come at 10 s)
        expect(waits.length, r.stderr).toBe(2);
        expect(waits[0]).toMatch(/holding .*warehouse.duckdb \(gives up in [78] s, then exits 3\)$/);
      }
    } finally {
      holder.stdin?.end();
    }
  });
});

describe('busy resources beside a running API', () => {
  it('generate and a second serve work beside a running API (one shared state store); a serve on a taken port: exit 3', async () => {
    const other = copyOfData('other-port');
    const api = start('serve', ['--data-dir', DATA, '--port', '0', '--workers', '1', '--no-log']);
    await until(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(api.stderr()), 'serve listening');
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(api.stderr())?.[1]);
    try {
      const second = start('serve', ['--data-dir', DATA, '--port', '0', '--workers', '1', '--no-log']);
      const [generate, taken] = await Promise.all([
        job('generate', ['--users', '1', '--days', '1', '--data-dir', DATA, '--out', join(TMP, 'gen')]),
        job('serve', ['--data-dir', other, '--port', String(port), '--workers', '1', '--no-log']),
      ]);
      expect(generate.code, generate.stderr).toBe(0);
      await until(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(second.stderr()), 'a second serve listening');
      second.child.kill('SIGTERM');
      await second.done;
      failedWith(
        taken,
        3,
        new RegExp(
          `^serve: failed: port ${port} on 127.0.0.1 is in use \\(another serve.js or npm start\\?\\); stop it or pass --port N$`,
        ),
      );
    } finally {
      api.child.kill('SIGTERM');
      await api.done;
    }
  });
});

describe('deliver and webhooks say why and what waits', () => {
  it('counts the events waiting in event files, says when an app has no URL, and deliver --once gives the failures by reason', async () => {
    const dir = copyOfData('hooks');
    const counts = await job('webhooks', ['counts', '--data-dir', dir]);
    expect(counts.code).toBe(0);
    const waiting = Number(/(\d+) waiting in event files/.exec(counts.stdout)?.[1]);
    expect(waiting).toBeGreaterThan(0);
    expect(counts.stdout).toContain(
      `waiting in 2 event file(s), not yet taken in by the deliverer: ${waiting} event(s) (${appId} ${waiting} (no URL set))`,
    );

    // a loopback receiver without --allow-loopback: every attempt refused, and the summary says why
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    await new AppStore(pathsFor(dir).appsFile).setWebhook(appId, `http://127.0.0.1:${port}/hooks`);
    const once = await job('deliver', ['--once', '--data-dir', dir]);
    expect(once.code).toBe(0);
    expect(once.stdout).toContain(
      `${waiting} attempt(s): 0 delivered, ${waiting} to retry, 0 dead-lettered; failed: ${waiting} blocked: plain http is allowed only to loopback hosts with DRIVING_WEBHOOK_ALLOW_LOOPBACK (or --allow-loopback)`,
    );
    // the same events, now in the outbox, and with a URL: when they are due, not "no URL set"
    const after = await job('webhooks', ['counts', '--data-dir', dir]);
    expect(after.stdout).toMatch(new RegExp(`^  ${appId}  pending: ${waiting} \\(0 due now, next 20`, 'm'));
    expect(after.stdout).toContain(', 0 waiting in event files');
    failedWith(
      await job('webhooks', ['show', 'evt_nosuch', '--data-dir', DATA]),
      2,
      /^webhooks show: failed: no outbox yet at .*: the deliverer has not run$/,
    );
  });
});

describe('a check that stops a publish (exit 4) and an internal failure (exit 1)', () => {
  it('exits 4 when a publish check fails, the last good snapshot kept', async () => {
    const dir = copyOfData('check');
    const db = await openDatabase(pathsFor(dir).warehouseFile);
    await run(db.connection, 'update stats_daily set mileage_m = mileage_m + 1, version = 1000');
    await run(db.connection, "update meta set value = '1000' where key = 'version'");
    db.close();
    failedWith(await job('load', ['--data-dir', dir]), 4, /^load: failed: .*checks\/stats_match_trips/);
  });

  it('exits 1 with one line when the warehouse is not a database file (a damaged data folder)', async () => {
    const dir = copyOfData('damaged');
    writeFileSync(pathsFor(dir).warehouseFile, 'not a database'.repeat(1000));
    rmSync(`${pathsFor(dir).warehouseFile}.wal`, { force: true });
    failedWith(await job('load', ['--data-dir', dir]), 1, /^load: failed: .*warehouse.duckdb/);
  });
});

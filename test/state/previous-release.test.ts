// A data folder made by the release before the shared state store (test/fixtures/previous-release,
// made by its make.sh from that release) opened by this release's processes in every start order:
// the folder migrates once, a log line says so, and the API answers what that release answered.
import { afterAll, describe, it } from 'vitest';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJobProcess, startJob, type Ran } from '../helpers/job-process.js';
import { freePort } from '../helpers/postgres.js';
import { startServe, until, type ServeProcess } from '../helpers/serve-process.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'previous-release');
const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8')) as {
  apiKey: string;
  token: string;
  answers: Record<string, unknown>;
};
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh copy of the previous release's data folder. */
function previousReleaseFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dds-upgrade-'));
  dirs.push(dir);
  execFileSync('tar', ['-xzf', join(FIXTURE, 'data.tar.gz'), '-C', dir]);
  return join(dir, 'data');
}

type Step = 'serve' | 'deliver' | 'load';

interface Started {
  serve?: ServeProcess;
  deliver?: { child: ChildProcess; done: Promise<Ran> };
  load?: Ran;
}

async function start(step: Step, data: string, into: Started): Promise<void> {
  if (step === 'serve') {
    into.serve = await startServe([
      '--data-dir',
      data,
      '--port',
      String(await freePort()),
      '--workers',
      '1',
      '--no-metrics',
    ]);
    children.push(into.serve.child);
  } else if (step === 'deliver') {
    into.deliver = startJob('deliver', ['--data-dir', data, '--no-metrics']);
    children.push(into.deliver.child);
    // up once it holds the outbox (or failed: then the test says why below)
    await until(
      () => existsSync(join(data, 'webhooks', 'deliverer.sock')) || into.deliver?.child.exitCode !== null,
      'the deliverer to hold the outbox',
    );
  } else {
    into.load = await runJobProcess('load', ['--data-dir', data]);
  }
}

const ORDERS: { name: string; groups: Step[][] }[] = [
  { name: 'serve first', groups: [['serve'], ['deliver'], ['load']] },
  { name: 'deliver first', groups: [['deliver'], ['load'], ['serve']] },
  { name: 'load first', groups: [['load'], ['serve'], ['deliver']] },
  { name: 'serve and deliver at once, then load', groups: [['serve', 'deliver'], ['load']] },
  { name: 'all three at once', groups: [['serve', 'deliver', 'load']] },
];

// the five orders at once, each on its own copy: a test waits on its processes most of its time
describe.concurrent('a folder of the previous release', () => {
  it.for(ORDERS)(
    'started $name: migrates once, says so in the log, and answers as the previous release did',
    async ({ groups }, { expect }) => {
      const data = previousReleaseFolder();
      const started: Started = {};
      for (const group of groups) await Promise.all(group.map((step) => start(step, data, started)));
      const serve = started.serve as ServeProcess;
      const deliver = started.deliver as { child: ChildProcess; done: Promise<Ran> };
      const load = started.load as Ran;
      expect(load.code, load.stderr).toBe(0);
      // the previous release's deletion request (a file) is carried out by this release's load
      expect(load.stderr).toMatch(/purged 1 deleted account\(s\) \(1 request\(s\)\): 4 trips/);
      expect(deliver.child.exitCode, 'the deliverer is running').toBeNull();

      for (const [path, answer] of Object.entries(expected.answers)) {
        const res = await fetch(`${serve.url}${path}`, { headers: { authorization: `Bearer ${expected.apiKey}` } });
        const body = (await res.json()) as Record<string, unknown>;
        delete body['requestId'];
        delete (answer as Record<string, unknown>)['requestId'];
        // fields this release added to an answer aside, every field of the previous answer is the same
        expect(body, path).toMatchObject(answer as Record<string, unknown>);
      }
      // the previous release's token and API key are still valid, the deleted account's data gone
      expect(expected.answers[`/v1/token/${expected.token}`]).toMatchObject({ orgUserId: 'driver-00001' });
      expect(
        JSON.stringify(expected.answers['/v1/org-user/driver-00003/trips?startTime=2026-11-01&endTime=2026-11-30']),
      ).toMatch(/user_not_found|not_found/);

      deliver.child.kill('SIGTERM');
      const delivered = await deliver.done;
      serve.child.kill('SIGTERM');
      await serve.exited;
      expect(delivered.code, delivered.stderr).toBe(0);
      // exactly one process took the files in, and said so; the others found it done
      const logs = [serve.stderr(), delivered.stderr, load.stderr].join('\n');
      const said = logs.split('\n').filter((l) => /state: migrated/.test(l));
      expect(said).toHaveLength(2);
      expect(said).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /state: migrated 1 apps, 3 accounts and 1 tokens from .* \(apps\.json, passport\.duckdb\) into /,
          ),
          expect.stringMatching(/state: migrated 1 deletion request\(s\) from .*requests\/deletions into /),
        ]),
      );
      expect(
        existsSync(join(data, 'requests', 'deletions')) && readdirSync(join(data, 'requests', 'deletions')).length > 0,
      ).toBe(false);
      expect(existsSync(join(data, 'passport', 'passport.duckdb'))).toBe(false);
      expect(existsSync(join(data, 'apps.json'))).toBe(false);
      expect(existsSync(join(data, 'apps.json.migrated'))).toBe(true);
    },
  );
});

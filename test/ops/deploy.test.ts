// The deployment files checked by the real tools: promtool accepts the alert rules and its unit
// tests prove each alert fires on a made-up series (and a rule made laxer fails them); promtool
// accepts the scrape configuration; systemd-analyze accepts the units and timers. Each tool
// missing on the machine skips its check with a printed reason (.ci/run installs promtool).
import { describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runTool, tool } from '../helpers/processes.js';

const PROMTOOL = tool('promtool');
const SYSTEMD_ANALYZE = tool('systemd-analyze');
const PROM = join(ROOT, 'deploy', 'prometheus');
const SYSTEMD = join(ROOT, 'deploy', 'systemd');
for (const [name, path] of [
  ['promtool', PROMTOOL],
  ['systemd-analyze', SYSTEMD_ANALYZE],
]) {
  if (!path) process.stderr.write(`deploy.test: ${name} not installed on this machine; its checks are skipped\n`);
}

function scratch(): { dir: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'dds-deploy-'));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

describe.skipIf(!PROMTOOL)('alert rules (promtool)', () => {
  it('are accepted by promtool check rules', () => {
    const r = runTool(PROMTOOL as string, ['check', 'rules', join(PROM, 'alerts.yml')]);
    expect(r.output).toMatch(/SUCCESS: 21 rules found/);
    expect(r.status).toBe(0);
  });

  it('fire on the made-up series of alerts.test.yml, each alert at least once', () => {
    const r = runTool(PROMTOOL as string, ['test', 'rules', join(PROM, 'alerts.test.yml')]);
    expect(r.output, r.output).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
    const alerts = [...readFileSync(join(PROM, 'alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    const fired = readFileSync(join(PROM, 'alerts.test.yml'), 'utf8')
      .split(/\n(?=\s+- alertname:)/)
      .filter((block) => /exp_labels/.test(block))
      .map((block) => /alertname: (\w+)/.exec(block)?.[1]);
    expect(new Set(fired)).toEqual(new Set(alerts));
  });

  it('a rule made laxer (the score late after 28 h, not 26) fails the unit tests', () => {
    const s = scratch();
    try {
      cpSync(PROM, s.dir, { recursive: true });
      const rules = readFileSync(join(s.dir, 'alerts.yml'), 'utf8');
      writeFileSync(join(s.dir, 'alerts.yml'), rules.replace('{job="score"} > 26 * 3600', '{job="score"} > 28 * 3600'));
      const r = runTool(PROMTOOL as string, ['test', 'rules', join(s.dir, 'alerts.test.yml')]);
      expect(r.output).toMatch(/FAILED[\s\S]*DrivingScoreLate/);
      expect(r.status).not.toBe(0);
    } finally {
      s.done();
    }
  });

  it('the scrape example is a valid Prometheus configuration', () => {
    const s = scratch();
    try {
      // the example names the rules where an install puts them; here, the repository's file
      const config = readFileSync(join(PROM, 'scrape.yml'), 'utf8').replace(
        '/etc/prometheus/driving-alerts.yml',
        join(PROM, 'alerts.yml'),
      );
      writeFileSync(join(s.dir, 'prometheus.yml'), config);
      const r = runTool(PROMTOOL as string, ['check', 'config', join(s.dir, 'prometheus.yml')]);
      expect(r.output).toMatch(/SUCCESS/);
      expect(r.status).toBe(0);
    } finally {
      s.done();
    }
  });
});

describe.skipIf(!SYSTEMD_ANALYZE)('systemd units and timers (systemd-analyze verify)', () => {
  const units = readdirSync(SYSTEMD).map((f) => join(SYSTEMD, f));

  it('are accepted without a warning', () => {
    const r = runTool(SYSTEMD_ANALYZE as string, ['verify', '--man=no', ...units]);
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  });

  it('a unit with a mistyped setting is not (the check can fail)', () => {
    const s = scratch();
    try {
      const unit = readFileSync(join(SYSTEMD, 'driving-api.service'), 'utf8').replace(
        'ProtectSystem=strict',
        'ProtectSystem=strickt',
      );
      writeFileSync(join(s.dir, 'driving-api.service'), unit);
      const r = runTool(SYSTEMD_ANALYZE as string, ['verify', '--man=no', join(s.dir, 'driving-api.service')]);
      expect(r.output).toMatch(/protect system value/i);
    } finally {
      s.done();
    }
  });
});

describe('the units and the crontab', () => {
  const unit = (name: string) => readFileSync(join(SYSTEMD, name), 'utf8');
  const setting = (text: string, key: string) =>
    [...text.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1] as string);

  it('every service runs as its own user, hardened, writing the data folder only, stopped by SIGTERM in bounded time', () => {
    for (const name of readdirSync(SYSTEMD).filter((f) => f.endsWith('.service'))) {
      const text = unit(name);
      expect(setting(text, 'User'), name).toEqual(['driving']);
      expect(setting(text, 'NoNewPrivileges'), name).toEqual(['yes']);
      expect(setting(text, 'ProtectSystem'), name).toEqual(['strict']);
      expect(setting(text, 'ReadWritePaths')[0]?.split(' '), name).toContain('/var/lib/driving');
      expect(setting(text, 'KillSignal'), name).toEqual(['SIGTERM']);
      expect(setting(text, 'TimeoutStopSec'), name).toHaveLength(1);
      expect(setting(text, 'Environment'), name).toContain('DRIVING_DATA_DIR=/var/lib/driving');
      if (setting(text, 'Type')[0] === 'simple') expect(setting(text, 'Restart'), name).toEqual(['on-failure']);
    }
  });

  it('the crontab runs the same commands as the services: the continuous load kept running, the score nightly', () => {
    const cron = readFileSync(join(ROOT, 'deploy', 'crontab'), 'utf8');
    for (const job of ['load', 'score']) {
      const exec = setting(unit(`driving-${job}.service`), 'ExecStart')[0] as string;
      expect(cron).toContain(exec);
    }
    expect(setting(unit('driving-score.timer'), 'Unit')).toEqual(['driving-score.service']);
    // the load is a service that stays up, restarted when it fails (cron: every minute, one at a time)
    expect(setting(unit('driving-load.service'), 'ExecStart')[0]).toContain('jobs/load.js --watch');
    expect(setting(unit('driving-load.service'), 'Type')).toEqual(['simple']);
    expect(existsSync(join(SYSTEMD, 'driving-load.timer'))).toBe(false);
    expect(cron).toMatch(/^\* \* \* \* \* .*flock -n \S+ \/usr\/bin\/node jobs\/load\.js --watch/m);
    expect(cron).toContain('DRIVING_WAREHOUSE_LOCK_WAIT_MS=10800000');
    expect(setting(unit('driving-score.service'), 'Environment')).toContain('DRIVING_WAREHOUSE_LOCK_WAIT_MS=10800000');
  });
});

describe('several machines', () => {
  const HAPROXY = process.env['DRIVING_HAPROXY'] ?? '/usr/sbin/haproxy';

  it.skipIf(!existsSync(HAPROXY))(
    'the HAProxy configurations over API machines on several hosts, and over cells, are valid',
    () => {
      for (const name of ['haproxy-machines.cfg', 'haproxy-cells.cfg']) {
        const r = runTool(HAPROXY, ['-c', '-f', join(ROOT, 'deploy', name)]);
        expect(r.output, name).toMatch(/Configuration file is valid/);
        expect(r.status, name).toBe(0);
      }
    },
  );

  it("the API machine's unit follows the job machine, whose rsync module offers published/ alone, read-only", () => {
    const unit = readFileSync(join(SYSTEMD, 'driving-api-follow.service'), 'utf8');
    expect(unit).toMatch(/^Environment=DRIVING_FOLLOW=rsync:\/\/\S+\/driving$/m);
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node jobs\/serve\.js /m);
    const conf = readFileSync(join(ROOT, 'deploy', 'rsyncd.conf'), 'utf8');
    const module = conf.slice(conf.indexOf('[driving]'));
    expect(module).toMatch(/^\s*read only = yes$/m);
    expect(module).toMatch(/^\s*include = \/published\/ \/published\/\*\*\*$/m);
    expect(module).toMatch(/^\s*exclude = \*$/m);
  });
});

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'driving-service.json'), 'utf8')) as {
    uid: string;
    panels: { type: string; title: string; targets?: { expr: string }[] }[];
  };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  it('shows the lag, the backlog, requests and latency by route, the outbox depth and the jobs', () => {
    const all = exprs.map((e) => e.expr).join('\n');
    for (const metric of [
      'driving_load_lag_seconds_bucket',
      'driving_landing_files',
      'driving_http_requests_total',
      'driving_http_request_duration_seconds_bucket',
      'driving_webhook_outbox_pending_events',
      'driving_job_duration_seconds',
    ]) {
      expect(all, metric).toContain(metric);
    }
  });

  it('asks only for series the service exports (docs/operating.md lists each)', () => {
    const documented = readFileSync(join(ROOT, 'docs', 'operating.md'), 'utf8');
    for (const { panel, expr } of exprs) {
      for (const [name] of expr.matchAll(/driving_[a-z0-9_]+/g)) {
        const family = name.replace(/_(bucket|sum|count)$/, '');
        expect(documented.includes(`\`${family}\``), `${panel}: ${name}`).toBe(true);
      }
    }
  });

  it.skipIf(!PROMTOOL)('holds queries promtool parses', () => {
    const s = scratch();
    try {
      const rules = exprs
        .map(({ expr }, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr)}`)
        .join('\n');
      writeFileSync(join(s.dir, 'dashboard.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules}\n`);
      const r = runTool(PROMTOOL as string, ['check', 'rules', join(s.dir, 'dashboard.yml')]);
      expect(r.output, r.output).toMatch(new RegExp(`SUCCESS: ${exprs.length} rules found`));
    } finally {
      s.done();
    }
  });
});

import pLimit, { type LimitFunction } from 'p-limit';
import { AppStore, type App } from '../apps/store.js';
import type { Paths } from '../data-folder.js';
import { silent, type Progress } from '../progress.js';
import { Breaker } from './breaker.js';
import { intakeEventFiles } from './intake.js';
import type { OutboxStore, DueAttempt, FinishedAttempt } from './outbox-store.js';
import { outcomeOf } from './schedule.js';
import { Sender, type SendResult } from './send.js';
import type { DeliverySettings } from './delivery-settings.js';
import { deliveryHeaders, signingSecrets } from './signature.js';
import { EndpointHealth } from './endpoint-health.js';
import { DEPTH_OVERALL, DEPTH_PER_APP, FLUSH_AT, asciiOnly, redactUrl, wants } from './delivery-policy.js';
import { addIntake, emptyCounters, failureReason, type DeliveryCounters } from './delivery-counters.js';

// Importers across the service take the counters from here.
export { emptyCounters, failureReason, type DeliveryCounters } from './delivery-counters.js';

/**
 * Delivers the outbox: takes event files in, sends due attempts with bounded concurrency (overall
 * and per endpoint), records every attempt, schedules retries. One `step()` does one turn without
 * waiting for the requests it starts; `runOnce()` and `runUntil()` repeat it.
 */
export class Deliverer {
  readonly counters: DeliveryCounters = emptyCounters();
  private readonly overall: LimitFunction;
  private readonly perEndpoint = new Map<string, LimitFunction>();
  private readonly breaker: Breaker;
  private readonly sender: Sender;
  private readonly health: EndpointHealth;
  /** Attempts taken from the queue and not yet recorded: seq → app. */
  private readonly taken = new Map<number, string>();
  private finished: FinishedAttempt[] = [];
  private readonly running = new Set<Promise<void>>();
  private apps = new Map<string, App>();
  private appsVersion = -1;
  private lastIntake = -Infinity;
  private lastPrune = -Infinity;
  private wakeUp: (() => void) | null = null;
  private stopping = false;
  /** Event files whose intake failed, and how often in a row (set aside after a few). */
  private readonly intakeFailures = new Map<string, number>();

  constructor(
    readonly outbox: OutboxStore,
    private readonly paths: Paths,
    private readonly settings: DeliverySettings,
    private readonly clock: () => Date = () => new Date(),
    private readonly progress: Progress = silent,
  ) {
    this.overall = pLimit(settings.concurrency);
    this.breaker = new Breaker(settings.breakerThreshold, settings.breakerCooldownMs);
    this.sender = new Sender(settings);
    this.health = new EndpointHealth(new AppStore(paths.appsFile), settings.disableAfterMs, progress);
  }

  /** One turn: record what finished, take new event files in, start the attempts that are due. */
  async step(options: { intake?: 'always' | 'poll' } = {}): Promise<number> {
    await this.flush();
    const now = this.clock();
    if (
      options.intake === 'always' ||
      now.getTime() - this.lastIntake >= this.settings.pollMs ||
      this.lastIntake > now.getTime()
    ) {
      this.lastIntake = now.getTime();
      // a file that cannot be taken in must not stop delivery of what is already in the outbox
      addIntake(
        this.counters.intake,
        await intakeEventFiles(this.outbox, this.paths.eventsDir, now, this.intakeFailures, this.progress),
      );
    }
    if (now.getTime() - this.lastPrune >= 3_600_000 || this.lastPrune > now.getTime()) {
      this.lastPrune = now.getTime();
      const pruned = await this.outbox.prune(new Date(now.getTime() - this.settings.retentionDays * 86_400_000), [
        ...(await this.appsWithWebhook()).keys(),
      ]);
      if (pruned > 0)
        this.progress(`deliver: forgot ${pruned} event(s) finished more than ${this.settings.retentionDays} days ago`);
    }
    return this.dispatchDue(now);
  }

  /**
   * Delivers everything that is due now, waiting for the answers; returns when nothing is left,
   * or soon after `stop` resolves (attempts not yet sent stay queued).
   */
  async runOnce(stop?: Promise<void>): Promise<DeliveryCounters> {
    this.stopping = false;
    void stop?.then(() => {
      this.stopping = true;
      this.wake();
    });
    let dispatched = await this.step({ intake: 'always' });
    while (!this.stopping && (dispatched > 0 || this.running.size > 0)) {
      if (this.running.size > 0) await Promise.race([...this.running, this.sleep(this.settings.pollMs)]);
      dispatched = await this.step();
    }
    await Promise.allSettled([...this.running]);
    await this.flush();
    await this.health.settled();
    return this.counters;
  }

  /** The continuous deliverer: turns until `stop` resolves, then lets the attempts in flight finish. */
  async runUntil(stop: Promise<void>): Promise<DeliveryCounters> {
    this.stopping = false;
    void stop.then(() => {
      this.stopping = true;
      this.wake();
    });
    let failures = 0;
    while (!this.stopping) {
      try {
        await this.step();
        failures = 0;
      } catch (error) {
        // a service keeps going: nothing was lost (unrecorded attempts stay queued); wait longer each time
        failures++;
        this.progress(
          `deliver: a turn failed (${failures} in a row), trying again: ${error instanceof Error ? error.message : String(error)}`,
        );
        await this.sleep(Math.min(this.settings.pollMs * 2 ** failures, 60_000));
      }
      if (!this.stopping) await this.sleep(this.settings.pollMs);
    }
    await Promise.allSettled([...this.running]);
    await this.flush();
    await this.health.settled();
    return this.counters;
  }

  /** Open breakers and work in memory, for the operator's counts. */
  state(): { inFlight: number; openEndpoints: { endpoint: string; openedAt: string; unanswered: number }[] } {
    return {
      inFlight: this.taken.size,
      openEndpoints: this.breaker.open().map((o) => ({ ...o, openedAt: new Date(o.openedAt).toISOString() })),
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.running]);
    await this.flush();
    await this.health.settled();
    this.sender.close();
  }

  private async dispatchDue(now: Date): Promise<number> {
    const apps = await this.appsWithWebhook();
    const perApp = DEPTH_PER_APP;
    const overallRoom = DEPTH_OVERALL - this.taken.size;
    if (this.stopping || apps.size === 0 || overallRoom <= 0) return 0;
    const takenByApp = new Map<string, number>();
    for (const app of this.taken.values()) takenByApp.set(app, (takenByApp.get(app) ?? 0) + 1);
    const open = [...apps.keys()].filter((id) => (takenByApp.get(id) ?? 0) < perApp);
    // taken attempts are still queued (and due), so fetch enough to see past them
    const due = await this.outbox.due(open, perApp * 2, now);
    let started = 0;
    for (const item of due) {
      if (started >= overallRoom) break;
      if (this.taken.has(item.seq)) continue;
      const count = takenByApp.get(item.appId) ?? 0;
      if (count >= perApp) continue;
      takenByApp.set(item.appId, count + 1);
      const app = apps.get(item.appId) as App;
      if (!wants(app, item.eventType)) {
        // the endpoint does not take this type: finished without an attempt
        this.taken.set(item.seq, item.appId);
        this.finish(
          item,
          app.webhookUrl as string,
          now,
          now,
          { statusCode: null, error: null, reach: 'refused', durationMs: 0 },
          'filtered',
        );
        continue;
      }
      this.start(item, app.webhookUrl as string);
      started++;
    }
    return started;
  }

  private start(item: DueAttempt, url: string): void {
    this.taken.set(item.seq, item.appId);
    const running = this.limiterFor(url)(() => this.attempt(item, url)).catch((error: unknown) => {
      // a bug in recording, not a receiver's failure: the attempt stays queued and is made again
      this.taken.delete(item.seq);
      this.progress(
        `deliver: attempt of ${item.eventId} failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    this.running.add(running);
    void running.finally(() => this.running.delete(running));
  }

  /**
   * One attempt, inside the endpoint's slot. The app's URL and the breaker are asked now, not when
   * the attempt was taken: the operator may have changed the URL meanwhile.
   */
  private async attempt(item: DueAttempt, url: string): Promise<void> {
    const app = (await this.appsWithWebhook()).get(item.appId);
    if (this.stopping || !app || app.webhookUrl !== url) return this.release(item);
    let admitted = item.kind === 'replay' ? 'send' : this.breaker.admit(url, this.clock().getTime());
    while (typeof admitted !== 'string') {
      await admitted;
      if (this.stopping) return this.release(item);
      admitted = this.breaker.admit(url, this.clock().getTime());
    }
    const startedAt = this.clock();
    let result: SendResult | null;
    if (admitted === 'reject') {
      result = {
        statusCode: null,
        error: 'circuit_open: the endpoint left the last attempts unanswered; not sent',
        reach: 'refused',
        durationMs: 0,
      };
    } else {
      result = await this.overall(() =>
        this.stopping
          ? null
          : this.sender.send({
              url,
              body: item.body,
              // counts the attempts actually sent: one the breaker failed without sending is no gap
              headers: deliveryHeaders(
                { id: item.eventId, type: item.eventType },
                item.body,
                item.sentAttempts + 1,
                signingSecrets(app, startedAt),
                startedAt,
              ),
            }),
      ).catch(
        (error: unknown): SendResult => ({
          // our own failure (a header the HTTP client refuses, say) still counts as an attempt, so
          // the event follows its schedule instead of being tried again at every turn
          statusCode: null,
          error: `internal: ${error instanceof Error ? error.message : String(error)}`,
          reach: 'refused',
          durationMs: 0,
        }),
      );
      if (result === null) {
        if (admitted === 'probe') this.breaker.abandonProbe(url);
        return this.release(item);
      }
    }
    const finishedAt = this.clock();
    if (admitted !== 'reject')
      this.breaker.record(url, result.reach !== 'unanswered', finishedAt.getTime(), admitted === 'probe');
    this.finish(item, url, startedAt, finishedAt, result, admitted === 'reject' ? 'skipped' : 'sent');
    if (admitted !== 'reject') this.health.note(app, url, result, startedAt, finishedAt);
  }

  /** Gives an attempt back without recording it: it stays queued for the next turn (or run). */
  private release(item: DueAttempt): void {
    this.taken.delete(item.seq);
  }

  /** `skipped`: failed by the open breaker, not sent; `filtered`: a type the endpoint does not take. */
  private finish(
    item: DueAttempt,
    url: string,
    startedAt: Date,
    finishedAt: Date,
    result: SendResult,
    how: 'sent' | 'skipped' | 'filtered',
  ): void {
    const shortCircuited = how === 'skipped';
    if (how === 'filtered') {
      this.finished.push({
        seq: item.seq,
        eventId: item.eventId,
        attempt: item.attemptCount,
        sent: false,
        kind: item.kind,
        startedAt,
        finishedAt,
        durationMs: 0,
        statusCode: null,
        error: null,
        url: redactUrl(url),
        outcome: 'filtered',
        nextAt: null,
      });
      this.counters.filtered++;
      return;
    }
    const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const next = outcomeOf(
      {
        kind: item.kind,
        delivered,
        scheduledBefore: item.scheduledAttempts,
        finishedAt,
        ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
      },
      this.settings.scheduleMs,
    );
    this.finished.push({
      seq: item.seq,
      eventId: item.eventId,
      attempt: item.attemptCount + 1,
      sent: !shortCircuited && result.reach !== 'refused',
      kind: item.kind,
      startedAt,
      finishedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      error: result.error,
      url: redactUrl(url),
      outcome: next.outcome,
      nextAt: next.outcome === 'retry' ? next.nextAt : null,
    });
    const c = this.counters;
    c.attempts++;
    if (shortCircuited) c.shortCircuited++;
    if (next.outcome === 'delivered') item.kind === 'replay' ? c.replayed++ : c.delivered++;
    else if (next.outcome === 'retry') c.retried++;
    else if (next.outcome === 'dead') c.dead++;
    else c.replayFailed++;
    if (next.outcome !== 'delivered') {
      const reason = failureReason(result.error, result.statusCode);
      c.failures[reason] = (c.failures[reason] ?? 0) + 1;
    }
    if (this.finished.length >= FLUSH_AT || this.taken.size === this.finished.length) this.wake();
  }

  /** Records finished attempts in one transaction; only then are they no longer "taken". */
  private async flush(): Promise<void> {
    if (this.finished.length === 0) return;
    const batch = this.finished;
    this.finished = [];
    try {
      await this.outbox.record(batch);
      for (const f of batch) this.taken.delete(f.seq);
    } catch (error) {
      // one attempt the database refuses (an odd error text) must not hold up all the others
      const left: FinishedAttempt[] = [];
      for (const f of batch) {
        try {
          await this.outbox
            .record([f])
            .catch(() => this.outbox.record([{ ...f, error: f.error === null ? null : asciiOnly(f.error) }]));
          this.taken.delete(f.seq);
        } catch {
          left.push(f);
        }
      }
      if (left.length > 0) {
        this.finished = [...left, ...this.finished];
        throw error;
      }
    }
  }

  private limiterFor(url: string): LimitFunction {
    let limit = this.perEndpoint.get(url);
    if (!limit) {
      limit = pLimit(this.settings.perEndpoint);
      this.perEndpoint.set(url, limit);
    }
    return limit;
  }

  /** Apps with an enabled webhook endpoint, re-read whenever the apps' version in the state store moves. */
  async appsWithWebhook(): Promise<Map<string, App>> {
    const store = new AppStore(this.paths.appsFile);
    const version = await store.version();
    if (version !== this.appsVersion) {
      const apps = await store.list();
      this.appsVersion = version;
      this.apps = new Map(apps.filter((a) => a.webhookUrl && !a.webhookDisabled).map((a) => [a.appId, a]));
    }
    return this.apps;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        if (self.wakeUp === done) self.wakeUp = null;
        resolve();
      }
      this.wakeUp = done;
    });
  }

  private wake(): void {
    this.wakeUp?.();
  }
}

// The watch stage's SDK client: one-trip uploads as the SDK sends them (`POST /v1/sdk/trips` with a
// passport token), each with a new tripId and its times moved to a slot of its driver's day that no
// other upload of the run takes, and a tracker that asks the API for each uploaded trip until it is
// served: the upload-to-served lag as an integrator sees it.
import { readFileSync } from 'node:fs';
import type { TripRecord } from '../src/generate/types.js';

/** Between two uploads of one driver: their trips never overlap (an overlapping trip is abnormal). */
const GAP_MS = 60_000;

export interface Upload {
  orgUserId: string;
  tripId: string;
  body: string;
}

/** The generator's records of one NDJSON file, as upload templates. */
export function readTemplates(file: string): TripRecord[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TripRecord);
}

/** A template cut to its first `points` points (its end and events with it); `events: false` drops them all. */
export function cutTrip(trip: TripRecord, points: number, events = true): TripRecord {
  if (trip.points.length <= points && events) return trip;
  const kept = trip.points.slice(0, points);
  const end = kept[kept.length - 1]?.t ?? instant(trip.endTime);
  return {
    ...trip,
    endTime: new Date(end).toISOString(),
    points: kept,
    events: events ? trip.events.filter((e) => e.startTime === undefined || Date.parse(e.startTime) <= end) : [],
  };
}

/**
 * Makes uploads from templates: upload i is template i (round), as driver i (round), with a new
 * tripId and every time in it (start, end, points, events) moved to the driver's next free slot
 * from `dayStartMs` on.
 */
export class UploadMaker {
  private readonly next = new Map<string, number>();
  private n = 0;

  constructor(
    private readonly dayStartMs: number,
    private readonly prefix: string,
  ) {}

  make(templates: readonly TripRecord[], orgUserIds: readonly string[]): Upload {
    const i = this.n++;
    const template = templates[i % templates.length] as TripRecord;
    const orgUserId = orgUserIds[i % orgUserIds.length] as string;
    const start = instant(template.startTime);
    const end = instant(template.endTime);
    const at = this.next.get(orgUserId) ?? this.dayStartMs;
    this.next.set(orgUserId, at + (end - start) + GAP_MS);
    const shift = at - start;
    const moved = (v: string | number | undefined): string | undefined =>
      v === undefined ? undefined : new Date(instant(v) + shift).toISOString();
    const tripId = `${this.prefix}-${i + 1}`;
    const record = {
      ...template,
      tripId,
      startTime: moved(template.startTime),
      endTime: moved(template.endTime),
      points: template.points.map((p) => ({ ...p, t: p.t === null ? null : p.t + shift })),
      events: template.events.map((e) => ({
        ...e,
        ...(e.startTime ? { startTime: moved(e.startTime) } : {}),
        ...(e.endTime ? { endTime: moved(e.endTime) } : {}),
      })),
    };
    return { orgUserId, tripId, body: JSON.stringify(record) };
  }
}

function instant(v: string | number): number {
  return typeof v === 'number' ? v : Date.parse(v);
}

/** Passport tokens for drivers, from `POST /v1/org-user/{id}/token` with the app's API key. */
export async function issueTokens(
  url: string,
  apiKey: string,
  orgUserIds: readonly string[],
): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  for (const id of orgUserIds) {
    const res = await fetch(`${url}/v1/org-user/${encodeURIComponent(id)}/token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const body = (await res.json()) as { token?: string };
    if (res.status !== 200 || !body.token)
      throw new Error(`token for ${id}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    tokens.set(id, body.token);
  }
  return tokens;
}

export interface LagSummary {
  uploads: number;
  accepted: number;
  /** Upload answered but the trip never served within the tracker's limit. */
  unserved: number;
  /** Refused or failed uploads (not 202). */
  failed: number;
  lagsMs: number[];
}

interface Pending {
  path: string;
  acceptedAt: number;
  give: number;
}

/** How many of the oldest pending trips are asked at once. */
const ASK_AT_ONCE = 4;

/**
 * Sends uploads open-loop (upload i is sent when due, whatever earlier ones are doing) and, when
 * `track`, asks `GET /v1/org-user/{id}/trip/{tripId}` with the API key every `pollMs` for each
 * until the first 200: its lag runs from the upload's 202 to that 200. A publish serves every file
 * that had arrived, so the oldest trips are asked first, and while they answer 200 the next ones
 * are asked at once: a batch's trips are seen within milliseconds of each other, with a handful of
 * requests a tick instead of one per pending trip (which at 10 uploads a second would be a load
 * of its own on the server measured).
 */
export class UploadRun {
  private readonly pending: Pending[] = [];
  private readonly summary: LagSummary = { uploads: 0, accepted: 0, unserved: 0, failed: 0, lagsMs: [] };
  private readonly inFlight = new Set<Promise<void>>();
  private polling: Promise<void> | null = null;
  private finishing = false;
  private failures: string[] = [];

  constructor(
    private readonly url: string,
    private readonly apiKey: string,
    private readonly tokens: Map<string, string>,
    private readonly track: boolean,
    private readonly pollMs = 50,
    private readonly giveUpMs = 180_000,
  ) {}

  /** Sends `count` uploads from `next` at `rate` a second, or until `until` says stop; returns when all are answered. */
  async send(next: () => Upload, rate: number, count: number, until: () => boolean = () => false): Promise<void> {
    if (this.track && !this.polling) this.polling = this.poll();
    const started = performance.now();
    for (let i = 0; i < count && !until(); i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const p = this.upload(next()).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }
    await Promise.all([...this.inFlight]);
  }

  /** Waits until every accepted upload is served (or given up on) and returns the figures. */
  async finish(): Promise<LagSummary> {
    this.finishing = true;
    await this.polling;
    return this.summary;
  }

  firstFailures(): string[] {
    return this.failures.slice(0, 3);
  }

  private async upload(u: Upload): Promise<void> {
    this.summary.uploads++;
    const token = this.tokens.get(u.orgUserId) as string;
    try {
      const res = await fetch(`${this.url}/v1/sdk/trips`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: u.body,
      });
      const text = await res.text();
      if (res.status !== 202 || !text.includes('"accepted":1')) {
        this.summary.failed++;
        if (this.failures.length < 10) this.failures.push(`${res.status} ${text.slice(0, 200)}`);
        return;
      }
      this.summary.accepted++;
      const acceptedAt = performance.now();
      if (this.track)
        this.pending.push({
          path: `/v1/org-user/${encodeURIComponent(u.orgUserId)}/trip/${encodeURIComponent(u.tripId)}`,
          acceptedAt,
          give: acceptedAt + this.giveUpMs,
        });
    } catch (error) {
      this.summary.failed++;
      if (this.failures.length < 10) this.failures.push(String(error));
    }
  }

  private async poll(): Promise<void> {
    for (;;) {
      if (this.finishing && this.pending.length === 0 && this.inFlight.size === 0) return;
      for (;;) {
        const head = this.pending.slice(0, ASK_AT_ONCE);
        if (head.length === 0) break;
        const served = await Promise.all(head.map((p) => this.served(p.path)));
        let any = false;
        head.forEach((p, i) => {
          const at = served[i];
          if (at !== null && at !== undefined) {
            this.summary.lagsMs.push(at - p.acceptedAt);
            this.pending.splice(this.pending.indexOf(p), 1);
            any = true;
          } else if (performance.now() > p.give) {
            this.summary.unserved++;
            this.pending.splice(this.pending.indexOf(p), 1);
          }
        });
        if (!any) break;
      }
      await sleep(this.pollMs);
    }
  }

  /** When the trip was first answered 200, or null. */
  private async served(path: string): Promise<number | null> {
    try {
      const res = await fetch(`${this.url}${path}`, { headers: { authorization: `Bearer ${this.apiKey}` } });
      await res.arrayBuffer();
      return res.status === 200 ? performance.now() : null;
    } catch {
      return null;
    }
  }
}

/** The q-quantile of values (nearest rank), or null for none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

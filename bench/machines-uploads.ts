// The machines stage's SDK client: one-trip uploads sent open-loop to several API machines in turn
// (as a load balancer's round robin does), and a tracker that asks every machine for each uploaded
// trip until all of them serve it: the upload-to-served-everywhere lag.
import type { LagSummary, Upload } from './watch-uploads.js';

interface Pending {
  path: string;
  acceptedAt: number;
  give: number;
  /** The machines that have not answered it 200 yet. */
  waiting: Set<string>;
}

/** How many of the oldest pending trips are asked at once. */
const ASK_AT_ONCE = 4;

export class MachinesRun {
  private readonly pending: Pending[] = [];
  private readonly summary: LagSummary = { uploads: 0, accepted: 0, unserved: 0, failed: 0, lagsMs: [] };
  private readonly inFlight = new Set<Promise<void>>();
  private polling: Promise<void> | null = null;
  private finishing = false;
  private turn = 0;

  constructor(
    private readonly urls: string[],
    private readonly apiKey: string,
    private readonly tokens: Map<string, string>,
    private readonly pollMs = 50,
    private readonly giveUpMs = 180_000,
  ) {}

  /** Sends `count` uploads from `next` at `rate` a second; returns when all are answered. */
  async send(next: () => Upload, rate: number, count: number): Promise<void> {
    this.polling ??= this.poll();
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const wait = started + (i * 1000) / rate - performance.now();
      if (wait > 0) await sleep(wait);
      const p = this.upload(next()).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }
    await Promise.all([...this.inFlight]);
  }

  /** Waits until every accepted upload is served everywhere (or given up on). */
  async finish(): Promise<LagSummary> {
    this.finishing = true;
    await this.polling;
    return this.summary;
  }

  private async upload(u: Upload): Promise<void> {
    this.summary.uploads++;
    const url = this.urls[this.turn++ % this.urls.length] as string;
    try {
      const res = await fetch(`${url}/v1/sdk/trips`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.tokens.get(u.orgUserId)}`, 'content-type': 'application/json' },
        body: u.body,
      });
      const text = await res.text();
      if (res.status !== 202 || !text.includes('"accepted":1')) {
        this.summary.failed++;
        return;
      }
      this.summary.accepted++;
      const acceptedAt = performance.now();
      this.pending.push({
        path: `/v1/org-user/${encodeURIComponent(u.orgUserId)}/trip/${encodeURIComponent(u.tripId)}`,
        acceptedAt,
        give: acceptedAt + this.giveUpMs,
        waiting: new Set(this.urls),
      });
    } catch {
      this.summary.failed++;
    }
  }

  private async poll(): Promise<void> {
    for (;;) {
      if (this.finishing && this.pending.length === 0 && this.inFlight.size === 0) return;
      for (;;) {
        const head = this.pending.slice(0, ASK_AT_ONCE);
        if (head.length === 0) break;
        let any = false;
        await Promise.all(
          head.map(async (p) => {
            for (const url of [...p.waiting]) if (await this.served(url, p.path)) p.waiting.delete(url);
            if (p.waiting.size === 0) {
              this.summary.lagsMs.push(performance.now() - p.acceptedAt);
              this.pending.splice(this.pending.indexOf(p), 1);
              any = true;
            } else if (performance.now() > p.give) {
              this.summary.unserved++;
              this.pending.splice(this.pending.indexOf(p), 1);
            }
          }),
        );
        if (!any) break;
      }
      await sleep(this.pollMs);
    }
  }

  private async served(url: string, path: string): Promise<boolean> {
    try {
      const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${this.apiKey}` } });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import type { AddressInfo } from 'node:net';
import { RecordBatchReader } from 'apache-arrow';
import { AppStore } from '../src/apps/store.js';
import { createApi } from '../src/api/server.js';
import { pathsFor } from '../src/config.js';

export interface ExportFigures {
  format: 'arrow' | 'ndjson';
  trips: number;
  bytes: number;
  seconds: number;
  tripsPerSecond: number;
  /** Peak resident set of this process (the API and the reading client together), sampled every 20 ms. */
  peakRssBytes: number;
}

/**
 * Times `GET /v1/exports/trips` over a real loopback connection against a data folder's published
 * snapshot, each format read to the end as a client would (Arrow with apache-arrow's streaming
 * reader, one batch at a time; NDJSON by counting lines). A new API key is issued for the run.
 *
 * @example await benchExport('/tmp/data') // [{ format: 'arrow', trips: 66_532, ... }, ...]
 */
export async function benchExport(dataDir: string): Promise<ExportFigures[]> {
  const store = new AppStore(pathsFor(dataDir).appsFile);
  const app = (await store.list())[0];
  if (!app) throw new Error(`no app in ${dataDir}`);
  const { apiKey } = await store.rotateKey(app.appId);
  const api = await createApi({ dataDir });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  const figures: ExportFigures[] = [];
  try {
    for (const format of ['arrow', 'ndjson'] as const) {
      global.gc?.();
      let peak = process.memoryUsage().rss;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
      const started = performance.now();
      const accept = format === 'arrow' ? 'application/vnd.apache.arrow.stream' : 'application/x-ndjson';
      const res = await fetch(`${base}/v1/exports/trips`, { headers: { authorization: `Bearer ${apiKey}`, accept } });
      if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}: ${await res.text()}`);
      let trips = 0;
      let bytes = 0;
      const counted = countBytes(res.body, (n) => (bytes += n));
      if (format === 'arrow') {
        for await (const batch of await RecordBatchReader.from(counted)) trips += batch.numRows;
      } else {
        for await (const chunk of counted) for (const byte of chunk) if (byte === 10) trips++;
      }
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      figures.push({ format, trips, bytes, seconds, tripsPerSecond: trips / seconds, peakRssBytes: peak });
    }
  } finally {
    await api.close();
  }
  return figures;
}

async function* countBytes(body: ReadableStream<Uint8Array>, add: (n: number) => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    add(chunk.length);
    yield chunk;
  }
}

// The shared rate store's cost a count, by hand: `node dist/bench/rate-store-probe.js PROCESSES
// COUNTS MAX` runs PROCESSES processes at once, each counting COUNTS requests (3 buckets) against
// a limit of MAX in one fresh file, and prints each one's CPU and wall time a count and how many
// counts took over 1 ms (a wait on another process's write lock). MAX 1 flushes at every count,
// which is what one write a request cost.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedRateStore } from '../src/api/http/rate-store.js';
import { weightedKey } from '../src/api/http/weighted-store.js';

type Store = { incr(key: string, cb: () => void, window: number, max: number): void };
const [processes, counts, max, file] = [
  Number(process.argv[2] ?? 2),
  Number(process.argv[3] ?? 20_000),
  Number(process.argv[4] ?? 1),
  process.argv[5],
];

if (file) {
  const Ctor = sharedRateStore(file, { processes });
  const store = new (Ctor as unknown as new () => Store)();
  // the others open the file meanwhile
  await new Promise((r) => setTimeout(r, 300));
  const cpu = process.cpuUsage();
  const started = performance.now();
  let slow = 0;
  for (let i = 0; i < counts; i++) {
    const t = performance.now();
    store.incr(weightedKey(`app:${i % 3}`, 1), () => undefined, 1_000, max);
    if (performance.now() - t > 1) slow++;
    // the timed flush gets its turns, as between requests
    if (i % 200 === 0) await new Promise((r) => setImmediate(r));
  }
  const used = process.cpuUsage(cpu);
  process.send?.({
    cpuUsPerCount: Math.round(((used.user + used.system) / counts) * 10) / 10,
    wallUsPerCount: Math.round((((performance.now() - started) * 1000) / counts) * 10) / 10,
    over1ms: slow,
  });
  Ctor.close();
} else {
  const dir = mkdtempSync(join(tmpdir(), 'rate-probe-'));
  const self = fileURLToPath(import.meta.url);
  const results = await Promise.all(
    Array.from(
      { length: processes },
      () =>
        new Promise((resolve) => {
          fork(self, [String(processes), String(counts), String(max), join(dir, 'rate.sqlite')]).on('message', resolve);
        }),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ processes, counts, max, results })}\n`);
}

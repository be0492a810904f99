// Preloaded into every job the bench starts (`node --import .../rss-probe.js jobs/x.js`): when the
// process exits it writes its own peak resident set size and CPU time to BENCH_PROBE_FILE. Measured
// from inside, so DuckDB's native memory counts and no external tool is needed.
import { writeFileSync } from 'node:fs';

const file = process.env['BENCH_PROBE_FILE'];
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    // maxRSS is in kilobytes (getrusage); CPU times in microseconds
    writeFileSync(
      file,
      JSON.stringify({ maxRssKb: usage.maxRSS, userCpuUs: usage.userCPUTime, systemCpuUs: usage.systemCPUTime }),
    );
  });
}

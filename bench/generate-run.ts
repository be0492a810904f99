import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childOptions, type BenchContext } from './context.js';
import { startNodeChild } from './child.js';
import type { LoadGeneratorConfig, LoadGeneratorResult } from './load-generator.js';

const GENERATOR = fileURLToPath(new URL('./load-generator.js', import.meta.url));

/**
 * One run of the load generator in its own process; `name` keeps the config files of runs that
 * go on at the same time apart.
 */
export async function runGenerator(
  ctx: BenchContext,
  config: LoadGeneratorConfig,
  name = 'route',
): Promise<LoadGeneratorResult> {
  const file = join(ctx.options.workDir, `load-generator-${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  const run = await startNodeChild(`load generator ${name} @${config.rate}/s`, GENERATOR, [file], {
    ...childOptions(ctx),
    ipc: true,
  }).done;
  const line = run.stdout.trim().split('\n').pop() ?? '';
  if (run.exitCode !== 0 || !line.startsWith('{'))
    throw new Error(`load generator exited ${run.exitCode}: ${run.stderrTail.slice(-3).join(' | ')}`);
  return JSON.parse(line) as LoadGeneratorResult;
}

import { describe, expect, it } from 'vitest';
import { heartbeat } from '../../src/heartbeat.js';

describe('heartbeat', () => {
  it('names the step again only after everyMs of silence, with the seconds the step has lasted', () => {
    let now = 0;
    const said: string[] = [];
    const beat = heartbeat((m) => said.push(m), { everyMs: 5_000, clock: () => now, timer: false });
    beat.tick();
    expect(said).toEqual([]); // nothing to name yet
    beat.doing('load: opening the warehouse');
    now = 4_999;
    beat.tick();
    expect(said).toEqual([]);
    now = 5_000;
    beat.tick();
    expect(said).toEqual(['load: opening the warehouse (5 s so far)']);
    // anything said is a sign of life: the next reminder is 5 s after it
    now = 7_000;
    beat.progress('load: warehouse open in 7.0 s');
    beat.doing('load: deriving a.ndjson (1 of 2)');
    now = 11_999;
    beat.tick();
    now = 12_000;
    beat.tick();
    now = 13_000;
    beat.tick();
    expect(said).toEqual([
      'load: opening the warehouse (5 s so far)',
      'load: warehouse open in 7.0 s',
      'load: deriving a.ndjson (1 of 2) (5 s so far)',
    ]);
    beat.stop();
  });
});

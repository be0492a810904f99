// Independent reference of the safety-score model (docs/models.md, safety-score/1) and of the
// explanation and rank decided in docs/decisions.md ("Statistics and scores"): written from
// the definitions, not from the SQL.
import type { RefFactors } from './factors.js';

/** The model's inputs in the order the API lists them, with each one's base. */
export const REF_BASES = {
  distractedDriving: 20,
  eveningRushHour: 1.5,
  acclongAbs1: 4,
  weekdayDriving: 1.2,
  lowSpeed: 1.5,
  eventsPer100km: 1.01,
} as const;

export type RefInput = keyof typeof REF_BASES;
export type RefInputs = Record<RefInput, number>;

/** PCF = 0.682 × Π base^value; score = clamp(115.38 − 22.3 × PCF, 0, 100). */
export function refScore(inputs: RefInputs): number {
  let pcf = 0.682;
  for (const name of Object.keys(REF_BASES) as RefInput[]) pcf *= REF_BASES[name] ** inputs[name];
  return Math.min(100, Math.max(0, 115.38 - 22.3 * pcf));
}

export function refInputs(f: RefFactors): RefInputs {
  const km = f.mileageInMeters / 1000;
  return {
    distractedDriving: f.distractedDriving,
    eveningRushHour: f.eveningRushHour,
    acclongAbs1: f.acclongAbs1,
    weekdayDriving: f.weekdayDriving,
    lowSpeed: f.lowSpeed,
    eventsPer100km: km === 0 ? 0 : (f.eventCount * 100) / km,
  };
}

export const round = (x: number, places: number): number => Math.round(x * 10 ** places) / 10 ** places;

export interface RefExplained {
  score: number; // unrounded
  factors: { factor: RefInput; value: number; multiplier: number; contribution: number }[];
}

/** Each input's multiplier (base^value) and contribution (score with it at 0, minus the score; 2 places). */
export function refExplain(inputs: RefInputs): RefExplained {
  const score = refScore(inputs);
  return {
    score,
    factors: (Object.keys(REF_BASES) as RefInput[]).map((factor) => ({
      factor,
      value: inputs[factor],
      multiplier: REF_BASES[factor] ** inputs[factor],
      contribution: round(refScore({ ...inputs, [factor]: 0 }) - score, 2),
    })),
  };
}

/**
 * Percentiles of one group (one app, evaluation date and interval) from the shown scores: rank =
 * 1 + how many are strictly lower (ties share the lowest rank), round(100 × (rank − 1) / (N − 1), 2),
 * 100 when alone.
 */
export function refPercentiles(scores: number[]): number[] {
  const n = scores.length;
  return scores.map((s) => {
    if (n === 1) return 100;
    const below = scores.filter((x) => x < s).length;
    return round((100 * below) / (n - 1), 2);
  });
}

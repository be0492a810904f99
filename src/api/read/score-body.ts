import type { ScoreRow } from './rows.js';
import { round } from '../http/context.js';

/**
 * The score object of the safety score and of each history entry, from a row of models/serving/api_safety_score.sql
 * (or the pack's equal payload). A factor's `multiplier` is what it multiplies the model's
 * predicted collision frequency by: its base to the power of its value (docs/models.md); its
 * `contribution` is the points of score it costs (docs/decisions.md, Statistics and scores). Both come from the nightly job.
 */
const FACTORS = [
  ['distractedDriving', 'distracted_driving', 4],
  ['eveningRushHour', 'evening_rush_hour', 4],
  ['acclongAbs1', 'acclong_abs_1', 4],
  ['weekdayDriving', 'weekday_driving', 4],
  ['lowSpeed', 'low_speed', 4],
  ['eventsPer100km', 'events', 2],
] as const;

const inputValue = (row: ScoreRow, column: (typeof FACTORS)[number][1]): number =>
  column === 'events' ? row.events_per_100km : row[column];

const nullable = (value: number | null, places: number): number | null =>
  value === null ? null : round(value, places);

export function scoreBody(row: ScoreRow, explain: boolean): Record<string, unknown> {
  return {
    evaluationDate: row.evaluation_date,
    evaluationTime: row.evaluation_time,
    startTime: row.start_time,
    endTime: row.end_time,
    safetyScore: round(row.safety_score, 2),
    tripCount: row.count_trips,
    distractedDriving: round(row.distracted_driving, 4),
    eveningRushHour: round(row.evening_rush_hour, 4),
    acclongAbs1: round(row.acclong_abs_1, 4),
    weekdayDriving: round(row.weekday_driving, 4),
    lowSpeed: round(row.low_speed, 4),
    percentile: nullable(row.percentile, 2),
    modelVersion: row.model_version,
    ...(explain
      ? {
          factors: FACTORS.map(([name, column, places]) => ({
            factor: name,
            value: round(inputValue(row, column), places),
            multiplier: nullable(row[`multiplier_${column}`], 4),
            contribution: nullable(row[`contribution_${column}`], 2),
          })),
        }
      : {}),
  };
}

const example = {
  evaluationDate: '2026-11-21',
  evaluationTime: '2026-11-21 02:00:07',
  startTime: '2026-10-22 00:00:00',
  endTime: '2026-11-20 23:59:59',
  safetyScore: 85.38,
  tripCount: 42,
  distractedDriving: 0.0213,
  eveningRushHour: 0.2517,
  acclongAbs1: 0.0932,
  weekdayDriving: 0.7411,
  lowSpeed: 0.3105,
  percentile: 64.29,
  modelVersion: 'safety-score/1',
  factors: [
    { factor: 'distractedDriving', value: 0.0213, multiplier: 1.0659, contribution: 1.85 },
    { factor: 'eveningRushHour', value: 0.2517, multiplier: 1.1074, contribution: 2.91 },
    { factor: 'acclongAbs1', value: 0.0932, multiplier: 1.1379, contribution: 3.64 },
    { factor: 'weekdayDriving', value: 0.7411, multiplier: 1.1447, contribution: 3.79 },
    { factor: 'lowSpeed', value: 0.3105, multiplier: 1.1342, contribution: 3.55 },
    { factor: 'eventsPer100km', value: 12.4, multiplier: 1.1313, contribution: 3.48 },
  ],
};

/** The score object's schema (serialisation and OpenAPI); `factors` only with explain (the default). */
export const ScoreSchema = {
  type: 'object',
  required: [
    'evaluationDate',
    'evaluationTime',
    'startTime',
    'endTime',
    'safetyScore',
    'tripCount',
    'distractedDriving',
    'eveningRushHour',
    'acclongAbs1',
    'weekdayDriving',
    'lowSpeed',
    'percentile',
    'modelVersion',
  ],
  properties: {
    evaluationDate: { type: 'string', description: 'The evaluation date D (app zone), YYYY-MM-DD.' },
    evaluationTime: { type: 'string', description: 'When the nightly job computed the score (app zone).' },
    startTime: { type: 'string', description: 'First second of the window: D − interval 00:00:00.' },
    endTime: { type: 'string', description: 'Last second of the window: D − 1 23:59:59.' },
    safetyScore: { type: 'number', description: '0 to 100, higher is safer.' },
    tripCount: { type: 'integer' },
    distractedDriving: { type: 'number' },
    eveningRushHour: { type: 'number' },
    acclongAbs1: { type: 'number' },
    weekdayDriving: { type: 'number' },
    lowSpeed: { type: 'number' },
    percentile: {
      type: ['number', 'null'],
      description:
        "Share (0–100) of the app's drivers scored that day for this interval with a lower score: round(100 × (rank − 1) / (N − 1), 2), ties sharing the lowest rank; 100 when N = 1. Higher is safer.",
    },
    modelVersion: { type: 'string', description: 'The version of the model that computed the score (docs/models.md).' },
    factors: {
      type: 'array',
      description: 'The explanation (left out with explain=false): the six model inputs in a fixed order.',
      items: {
        type: 'object',
        required: ['factor', 'value', 'multiplier', 'contribution'],
        properties: {
          factor: {
            type: 'string',
            enum: FACTORS.map(([name]) => name),
            description: 'The input: the five factors and the dangerous events per 100 km.',
          },
          value: { type: 'number', description: "The input's value (shares to 4 places, events per 100 km to 2)." },
          multiplier: {
            type: ['number', 'null'],
            description: 'What the input multiplies the predicted collision frequency by: base^value.',
          },
          contribution: {
            type: ['number', 'null'],
            description:
              'Points of score it costs: the score with this input at 0, the others unchanged, minus the score (both clamped to [0, 100]).',
          },
        },
      },
    },
  },
  examples: [example],
} as const;

export const scoreExample = example;

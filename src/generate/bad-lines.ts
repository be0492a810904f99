import type { TripRecord } from './types.js';

type Fields = Record<string, unknown>;
type Fault = (record: Fields) => void;

const unset =
  (field: string): Fault =>
  (record) => {
    delete record[field];
  };
const set =
  (field: string, value: unknown): Fault =>
  (record) => {
    record[field] = value;
  };
/** An ISO time without its offset (`…T08:01:02+01:00` → `…T08:01:02`): a local time nobody can place. */
const dropOffset =
  (field: string): Fault =>
  (record) => {
    record[field] = String(record[field]).slice(0, 19);
  };
const asString =
  (field: string): Fault =>
  (record) => {
    record[field] = String(record[field]);
  };

/**
 * Record-level faults in the loader's precedence order, each breaking exactly one rule so that
 * no earlier reason applies.
 */
const FIELD_FAULTS: ReadonlyArray<readonly [string, readonly Fault[]]> = [
  ['missing_app_id', [unset('appId'), unset('appId')]],
  ['unknown_app', [set('appId', 'no-such-app'), set('appId', 'other-app')]],
  [
    'invalid_platform_user_id',
    [unset('platformUserId'), set('platformUserId', -7), set('platformUserId', 12.5), asString('platformUserId')],
  ],
  ['missing_org_user_id', [unset('orgUserId'), unset('orgUserId')]],
  ['missing_trip_id', [unset('tripId'), unset('tripId')]],
  ['invalid_os', [unset('os'), set('os', 'windows')]],
  ['invalid_coordinate', [set('coordinate', 'BD09'), set('coordinate', 'UTM')]],
  ['invalid_start_time', [unset('startTime'), dropOffset('startTime'), set('startTime', 'yesterday morning')]],
  ['invalid_end_time', [unset('endTime'), dropOffset('endTime'), set('endTime', 'soon')]],
  // before 2000, or after any load's clock (docs/decisions.md, Trip records (load))
  ['time_out_of_range', [set('startTime', '1999-12-31T23:50:00Z'), set('endTime', '9999-12-31T00:00:00Z')]],
];

export interface BadLine {
  reason: string;
  line: string;
}

/**
 * Lines the loader must reject, at least two per reason, made from well-formed templates whose
 * times are ISO strings. Rejected lines get their own tripIds so they never shadow a good trip.
 *
 * @example badLines([record]).map((b) => b.line).join('\n')
 */
export function badLines(templates: readonly TripRecord[]): BadLine[] {
  if (templates.length === 0) throw new Error('bad lines need at least one template trip');
  let n = 0;
  const variant = (): Fields => {
    const template = templates[n % templates.length] as TripRecord;
    n += 1;
    return {
      ...template,
      tripId: `${template.tripId}-rejected-${n}`,
      points: template.points.slice(0, 10),
      events: [],
    };
  };
  const whole = JSON.stringify(variant());
  const lines: BadLine[] = [
    { reason: 'invalid_json', line: whole.slice(0, 60) },
    { reason: 'invalid_json', line: whole.slice(0, -1) },
    { reason: 'not_an_object', line: `[${whole}]` },
    { reason: 'not_an_object', line: '42' },
  ];
  for (const [reason, faults] of FIELD_FAULTS) {
    for (const fault of faults) {
      const record = variant();
      fault(record);
      lines.push({ reason, line: JSON.stringify(record) });
    }
  }
  return lines;
}

/**
 * models/marts/statistics_periods.sql over one user's daily rows, in JS for the serving pack: calendar
 * periods (day, ISO week Monday-Sunday, month) overlapping [start, end], clipped to it, ascending,
 * empty ones with zeros. test/serving asserts it equals the SQL on the same rows.
 */
export interface DayStats {
  /** Days since 1970-01-01. */
  day: number;
  countTrips: number;
  mileageM: number;
  durationS: number;
  countEvents: number;
  maxSpeedKmh: number;
  scoreXMileage: number;
  scoreSum: number;
}

export type Period = 'day' | 'week' | 'month';
const DAY_MS = 86_400_000;

export const epochDay = (isoDate: string): number => Date.parse(`${isoDate}T00:00:00Z`) / DAY_MS;
/**
 * Days since 1970-01-01 as YYYY-MM-DD (H. Hinnant's civil_from_days): a statistics answer formats
 * up to two dates per period, and Date#toISOString was the busiest function of the statistics route's profile.
 */
export function isoDate(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1_460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

/** First day of each period overlapping [first, last] (date_trunc, then generate_series). */
function periodStarts(period: Period, first: number, last: number): { start: number; next: number }[] {
  const out: { start: number; next: number }[] = [];
  if (period === 'day') {
    for (let d = first; d <= last; d++) out.push({ start: d, next: d + 1 });
  } else if (period === 'week') {
    // 1970-01-01 was a Thursday: Monday-based weekday is (day + 3) mod 7
    for (let d = first - ((((first + 3) % 7) + 7) % 7); d <= last; d += 7) out.push({ start: d, next: d + 7 });
  } else {
    const f = new Date(first * DAY_MS);
    for (let y = f.getUTCFullYear(), m = f.getUTCMonth(); ; m++) {
      const start = Date.UTC(y, m, 1) / DAY_MS;
      if (start > last) break;
      out.push({ start, next: Date.UTC(y, m + 1, 1) / DAY_MS });
    }
  }
  return out;
}

/** `days` sorted by day; rows as models/marts/statistics_periods.sql returns them (BIGINT sums as strings). */
export function statisticsPeriods(
  days: DayStats[],
  period: Period,
  startDate: string,
  endDate: string,
): Record<string, unknown>[] {
  const first = epochDay(startDate);
  const last = epochDay(endDate);
  const rows: Record<string, unknown>[] = [];
  let i = 0;
  while (i < days.length && (days[i] as DayStats).day < first) i++;
  for (const p of periodStarts(period, first, last)) {
    const from = Math.max(p.start, first);
    const to = Math.min(p.next - 1, last);
    let trips = 0,
      mileage = 0,
      duration = 0,
      events = 0,
      maxSpeed = 0,
      sxm = 0,
      ssum = 0,
      any = false;
    for (; i < days.length && (days[i] as DayStats).day <= to; i++) {
      const d = days[i] as DayStats;
      if (d.day < from) continue;
      any = true;
      trips += d.countTrips;
      mileage += d.mileageM;
      duration += d.durationS;
      events += d.countEvents;
      maxSpeed = Math.max(maxSpeed, d.maxSpeedKmh);
      sxm += d.scoreXMileage;
      ssum += d.scoreSum;
    }
    rows.push({
      period_start: isoDate(from),
      period_end: isoDate(to),
      count_trips: trips,
      mileage_m: String(mileage),
      count_events: String(events),
      duration_s: String(duration),
      max_speed_kmh: any ? maxSpeed : 0,
      // share(sum(mileage) * 3.6, sum(duration)): the SQL multiplies exactly (a DECIMAL), then divides in doubles
      avg_speed_kmh: duration === 0 ? 0 : (mileage * 36) / 10 / duration,
      score: mileage > 0 ? sxm / mileage : trips > 0 ? ssum / trips : 0,
    });
  }
  return rows;
}

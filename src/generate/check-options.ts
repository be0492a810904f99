import { isDate, isValidZone } from '../time.js';
import type { GenerateOptions } from './types.js';

/** Throws on options the generator cannot honour, naming the first bad one. */
export function checkOptions(options: GenerateOptions): void {
  const problems: string[] = [];
  if (!options.appId) problems.push('appId is empty');
  if (!isValidZone(options.timeZone)) problems.push(`timeZone ${options.timeZone} is not an IANA zone`);
  if (!isDate(options.endDate)) problems.push(`endDate ${options.endDate} is not a YYYY-MM-DD date`);
  if (!Number.isInteger(options.days) || options.days < 1) problems.push('days must be a positive integer');
  if (!Number.isSafeInteger(options.seed)) problems.push('seed must be a safe integer');
  if (options.users.length === 0) problems.push('users is empty');
  const ids = new Set<number>();
  for (const user of options.users) {
    if (!Number.isSafeInteger(user.platformUserId) || user.platformUserId <= 0) {
      problems.push(`platformUserId ${user.platformUserId} is not a positive integer`);
    }
    if (ids.has(user.platformUserId)) problems.push(`platformUserId ${user.platformUserId} is repeated`);
    ids.add(user.platformUserId);
  }
  if (problems.length > 0) throw new Error(`generateTrips: ${problems[0]}`);
}

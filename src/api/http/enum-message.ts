/**
 * What a 400 says of a value outside an enum: Ajv's words and the values the parameter takes, so a
 * caller who typed `type=weekly` reads `type: must be equal to one of the allowed values: day,
 * week, month` and needs no trip to /docs. The OpenAPI examples use it too.
 *
 * @example enumMessage(['day', 'week', 'month']) // 'must be equal to one of the allowed values: day, week, month'
 */
export function enumMessage(allowed: readonly unknown[]): string {
  return `must be equal to one of the allowed values: ${allowed.map(String).join(', ')}`;
}

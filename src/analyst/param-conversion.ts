/**
 * What to add to DuckDB's "Conversion Error" when a `--param` value does not convert to the type the
 * file gives it: which parameter, its value and the type (from the file's `-- params:` header, else
 * DuckDB's own word), and for a user id where the numeric one is found. DuckDB's own line names
 * only the value, and a newcomer's first try is the id the API takes (driver-00001).
 *
 * @example conversionHint(text, { user_id: 'driver-00001' }, "Conversion Error: Could not convert string 'driver-00001' to INT64")
 * // "--param user_id=driver-00001 must be a BIGINT ($user_id in this file); user_id is ..."
 */
export function conversionHint(sqlText: string, params: Record<string, string>, message: string): string | null {
  if (!/Conversion Error/i.test(message)) return null;
  const name = Object.keys(params).find((n) => {
    const value = params[n] as string;
    return message.includes(`'${value}'`) || message.includes(`"${value}"`);
  });
  if (name === undefined) return null;
  const value = params[name] as string;
  const type =
    declaredTypes(sqlText)[name] ??
    /\bto (\w+)/.exec(message.slice(message.indexOf(value) + value.length))?.[1] ??
    'the type it is given';
  const userId =
    name === 'user_id'
      ? `; user_id is the numeric user id: sql/analyses/users.sql lists it beside each org_user_id${/\D/.test(value) ? ` (such as ${value})` : ''}`
      : '';
  return `--param ${name}=${value} must be a ${type} ($${name} in this file)${userId}`;
}

/** The types a file's header comment gives its parameters: `-- params: $user_id BIGINT, $start_date DATE`. */
function declaredTypes(sqlText: string): Record<string, string> {
  const types: Record<string, string> = {};
  for (const line of sqlText.split('\n')) {
    if (!line.trimStart().startsWith('--')) continue;
    for (const m of line.matchAll(/\$(\w+)\s+([A-Z][A-Z0-9_]*)/g)) types[m[1] as string] ??= m[2] as string;
  }
  return types;
}

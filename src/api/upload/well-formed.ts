/** A UTF-16 surrogate without its partner: such a string has no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The path of the first string (a value or a key) in `value` that holds a lone surrogate, or null.
 * JSON allows one (`"\ud800"`), but the record has no UTF-8 form and the load would refuse the
 * whole line (`invalid_json`); the upload refuses the record at once and names the field.
 * @example loneSurrogatePath({ tripId: 'a\ud800' }) // 'tripId'
 * @example loneSurrogatePath({ events: [{ description: '\udc00' }] }) // 'events[0].description'
 */
export function loneSurrogatePath(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path || '(record)' : null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = loneSurrogatePath(item, `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (LONE_SURROGATE.test(key)) return here;
      const found = loneSurrogatePath(item, here);
      if (found !== null) return found;
    }
  }
  return null;
}

// Finds SQL statements written inline in TypeScript under src/: a string literal (quoted or a
// template) that opens with a statement's first words. The SQL lives in sql/ (CONTRIBUTING.md);
// what stays inline is a statement whose text cannot live in a file, and says why beside it.
// Plain JavaScript so that it runs before the build (tools/house.js --check runs it in npm run lint).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** At most this many inline statement lines under src/ (`npm run lint` fails above it). */
export const INLINE_SQL_LIMIT = 20;

// A statement's opening words, each shaped so prose ('with --follow: ...', 'Delete a user',
// case 'copy') is not taken for SQL. The quote may be followed by white space (a template whose
// statement starts on its next line).
const STATEMENT = new RegExp(
  String.raw`(['"\x60])\s*(?:` +
    [
      String.raw`select\s`,
      String.raw`insert\s+(?:or\s+\w+\s+)?into\s`,
      String.raw`update\s+[\w.]+\s+set\s`,
      String.raw`delete\s+from\s`,
      String.raw`create\s+(?:or\s+replace\s+)?(?:temp\s+|temporary\s+)?(?:table|view|macro|index|sequence|schema|type|\$\{)`,
      String.raw`drop\s+(?:table|view|macro|index|sequence|schema|type|\$\{)`,
      String.raw`alter\s+(?:table|view)\s`,
      String.raw`copy\s*(?:\(|from\s+database\s|[\w.$"{}]+\s+(?:to|from)\s)`,
      String.raw`(?:attach|detach|use)\s+[\w"$]`,
      String.raw`pragma\s`,
      String.raw`(?:begin(?:\s+transaction|\s+immediate|\s+exclusive|\s+deferred)?|start\s+transaction)\s*['"\x60]`,
      String.raw`(?:commit|rollback)(?:\s+transaction)?\s*['"\x60]`,
      String.raw`checkpoint\b`,
      String.raw`with\s+(?:recursive\s+)?\w+\s+as\s*\(`,
      String.raw`(?:set|reset|load|install|vacuum|analyze|export|import)\s+(?:database|global|session|local|\w+\s*=)`,
    ].join('|') +
    ')',
  'gi',
);

/** Every .ts file under dir (relative to root). */
function sources(root, dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(root, join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The inline statements of one file's text: each as its line number and the line. */
export function inlineStatements(text) {
  const lines = text.split('\n');
  const found = new Map();
  for (const m of text.matchAll(STATEMENT)) {
    const lineNo = text.slice(0, m.index).split('\n').length;
    const line = lines[lineNo - 1] ?? '';
    const trimmed = line.trim();
    // a comment that names a statement is prose
    if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*')) continue;
    found.set(lineNo, trimmed);
  }
  return [...found].map(([line, text]) => ({ line, text }));
}

/** Every inline statement line under `<root>/src`, as `{ file, line, text }`. */
export function inlineSql(root, dir = 'src') {
  return sources(root, dir)
    .sort()
    .flatMap((file) => inlineStatements(readFileSync(join(root, file), 'utf8')).map((s) => ({ file, ...s })));
}

/** The inline statements under `<root>/src` against the limit: `failed` when there are more. */
export function inlineSqlReport(root, limit = INLINE_SQL_LIMIT) {
  const found = inlineSql(root);
  return { found, limit, failed: found.length > limit };
}

#!/usr/bin/env node
// Draws the house from the imports: the rooms, the floors they stand on (a room imports only rooms
// on lower floors) and the circles (import cycles between files and between rooms). A room is a
// folder directly under src/ (its subfolders are parts of it: src/api/routes belongs to src/api,
// whose app mounts the routes that read its context), the files directly in src/ (room `src`), or
// bench/. The jobs' entry modules (src/jobs/main/, what jobs/*.js run) are a room of their own on
// the top floor: they wire every other room, the bench's too, and nothing imports them. Type-only imports count: a circle over types still makes two files
// that cannot be read one before the other. It also counts the SQL statements written inline under
// src/ (tools/inline-sql.js). `--check` exits 1 when there is any circle, or more inline SQL than allowed.
// Plain JavaScript so that it runs before the build (npm run lint).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inlineSqlReport } from './inline-sql.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TOPS = ['src', 'bench'];

/** Every .ts file under dir, as a path relative to the repository root. */
function sources(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

// static imports and re-exports (whole statement at the start of a line), side-effect imports,
// dynamic import() of a literal
const STATIC = /^\s*(?:import|export)\s+(?:type\s+)?[\w*\s{},$]*?\s*from\s*['"]([^'"]+)['"]/gm;
const BARE = /^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The repository files that `file` imports (relative specifiers only; NodeNext's .js names the .ts). */
function importsOf(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const specs = [STATIC, BARE, DYNAMIC].flatMap((re) => [...text.matchAll(re)].map((m) => m[1]));
  const out = new Set();
  for (const spec of specs) {
    if (!spec.startsWith('.')) continue;
    const target = join(dirname(file), spec).replace(/\.js$/, '.ts');
    if (existsSync(join(root, target))) out.add(target);
  }
  return [...out];
}

/** Tarjan's strongly connected components of a graph given as Map<node, node[]>. */
function components(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const out = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

const files = TOPS.flatMap(sources).sort();
const fileGraph = new Map(files.map((f) => [f, importsOf(f)]));
const ENTRY_ROOM = 'src/jobs/main';
const roomOf = (file) => {
  if (file.startsWith(`${ENTRY_ROOM}/`)) return ENTRY_ROOM;
  const parts = file.split('/');
  return parts[0] === 'src' && parts.length > 2 ? `src/${parts[1]}` : parts[0];
};
const roomGraph = new Map();
for (const [file, targets] of fileGraph) {
  const deps = roomGraph.get(roomOf(file)) ?? new Set();
  for (const t of targets) if (roomOf(t) !== roomOf(file)) deps.add(roomOf(t));
  roomGraph.set(roomOf(file), deps);
}
const rooms = new Map([...roomGraph].map(([r, deps]) => [r, [...deps].sort()]));

const fileCircles = components(fileGraph).filter((c) => c.length > 1 || (fileGraph.get(c[0]) ?? []).includes(c[0]));
const roomComponents = components(rooms);
const roomCircles = roomComponents.filter((c) => c.length > 1);

// floors over the rooms' components (Tarjan lists a component after every one it imports):
// ground floor 0 imports no other room; each room stands one above the highest room it imports
const floorOf = new Map();
for (const scc of roomComponents) {
  const below = scc.flatMap((r) => rooms.get(r) ?? []).filter((d) => !scc.includes(d));
  const floor = below.length === 0 ? 0 : 1 + Math.max(...below.map((d) => floorOf.get(d)));
  for (const r of scc) floorOf.set(r, floor);
}
const floors = Math.max(...floorOf.values()) + 1;

console.log(
  `house: ${files.length} files, ${rooms.size} rooms on ${floors} floors, ${fileCircles.length} file circles, ${roomCircles.length} room circles`,
);
for (let f = floors - 1; f >= 0; f--) {
  const here = [...floorOf]
    .filter(([, fl]) => fl === f)
    .map(([r]) => r)
    .sort();
  console.log(`  floor ${f}: ${here.join(' ')}`);
}
for (const c of fileCircles) console.log(`  file circle: ${c.join(' <-> ')}`);
for (const c of roomCircles) {
  console.log(`  room circle: ${c.join(' <-> ')}`);
  // the imports that close it, so a reader knows where to cut
  for (const [file, targets] of fileGraph)
    for (const t of targets)
      if (roomOf(t) !== roomOf(file) && c.includes(roomOf(file)) && c.includes(roomOf(t)))
        console.log(`    ${file} -> ${relative(root, join(root, t))}`);
}
// the SQL lives in sql/: what stays inline under src/ is counted (tools/inline-sql.js)
const check = process.argv.includes('--check');
const inline = inlineSqlReport(root);
console.log(`  inline SQL: ${inline.found.length} statement line(s) under src/, at most ${inline.limit}`);
if (!check || inline.failed) for (const s of inline.found) console.log(`    ${s.file}:${s.line}: ${s.text}`);
if (check && fileCircles.length + roomCircles.length > 0) {
  console.error('house: import circles (above) must be broken');
  process.exit(1);
}
if (check && inline.failed) {
  console.error(`house: more than ${inline.limit} lines of inline SQL under src/ (above): move them to sql/`);
  process.exit(1);
}

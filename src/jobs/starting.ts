// A job's first word, said before anything else is loaded: an entry point imports this module
// statically and the rest of its code dynamically afterwards (Node reads every static import
// before running any). Reading the load's modules and DuckDB's native library can mean seconds of
// silence on a busy machine, far longer than Node's own start. No imports here, so nothing delays
// it.
const [, script = '', ...args] = process.argv;
const name = (script.split('/').pop() ?? '').replace(/\.js$/, '');
if (!args.includes('--help')) {
  process.stderr.write(
    `${new Date().toISOString().slice(11, 19)} ${name}: starting (loading DuckDB and the job's code)\n`,
  );
}
export {};

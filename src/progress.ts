/** Where jobs say what they do. Progress goes to stderr so `--json` output on stdout stays clean. */
export type Progress = (message: string) => void;

export const stderrProgress: Progress = (message) => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
};

export const silent: Progress = () => undefined;

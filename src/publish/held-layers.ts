import type { Section } from '../serving/format.js';
import { SectionFile } from '../serving/pack.js';

/**
 * The served pack's layers, kept open from one publish to the next by a process that publishes
 * every few seconds (load.js --watch). Opening a layer parses its whole footer (every user's entry:
 * megabytes of JSON for a base at the full size) on the event loop; a batch's publish opens the
 * layers of every section it writes a delta for, so without this the continuous load paid for the
 * history's users at every batch, where a nightly load pays once. Layers are shared by identity
 * (SectionFile.acquire: device, inode, size, modification time), so a file written anew under the
 * same name is opened anew; one no longer in the served pack is let go after the publish that
 * replaced it (its name may be gone already: an open file outlives its name).
 */
export class HeldLayers {
  /** Each kept layer by path, with a reference of its own (SectionFile.acquire). */
  private readonly held = new Map<string, SectionFile>();

  /**
   * After a section is written: those of `opened` (the served layers this publish read) that its
   * new layers `names` (paths) still include are kept for the next publish.
   */
  keep(section: Section, opened: SectionFile[], names: string[]): void {
    const wanted = new Set(names);
    for (const file of opened)
      if (wanted.has(file.name) && !this.held.has(file.name))
        // a reference of its own, so that the publish's release leaves it open
        this.held.set(file.name, SectionFile.acquire(file.name, section));
  }

  /**
   * After a publish: every kept layer its new pack (`named`, paths) no longer names is let go: merged
   * or scrubbed away by this publish, or replaced since it was kept by another job (the score, a
   * re-derivation) in a section this publish did not write.
   */
  retain(named: Set<string>): void {
    for (const [path, file] of this.held)
      if (!named.has(path)) {
        file.release();
        this.held.delete(path);
      }
  }

  /** Lets every kept layer go (the watch stops). */
  releaseAll(): void {
    this.retain(new Set());
  }

  /** The paths of the layers kept open. */
  paths(): string[] {
    return [...this.held.keys()];
  }
}

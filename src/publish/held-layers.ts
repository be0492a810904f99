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
  private readonly held = new Map<Section, Map<string, SectionFile>>();

  /**
   * After a section is written: of `opened` (the served layers this publish read), those its new
   * layers `names` (paths) still include are kept for the next publish, and every layer of the
   * section kept before that they no longer include is let go.
   */
  keep(section: Section, opened: SectionFile[], names: string[]): void {
    const wanted = new Set(names);
    const held = this.held.get(section) ?? new Map<string, SectionFile>();
    this.held.set(section, held);
    for (const [path, file] of held)
      if (!wanted.has(path)) {
        file.release();
        held.delete(path);
      }
    for (const file of opened)
      if (wanted.has(file.name) && !held.has(file.name))
        // a reference of its own, so that the publish's release leaves it open
        held.set(file.name, SectionFile.acquire(file.name, section));
  }

  /**
   * After a publish: every kept layer its new pack (`named`, paths) no longer names is let go, also
   * of a section it did not write (another job, such as the score or a re-derivation, may have
   * replaced that section's layers since they were kept).
   */
  retain(named: Set<string>): void {
    for (const held of this.held.values())
      for (const [path, file] of held)
        if (!named.has(path)) {
          file.release();
          held.delete(path);
        }
  }

  /** Lets every kept layer go (the watch stops). */
  releaseAll(): void {
    for (const held of this.held.values()) for (const file of held.values()) file.release();
    this.held.clear();
  }

  /** The paths of the layers kept open. */
  paths(): string[] {
    return [...this.held.values()].flatMap((held) => [...held.keys()]);
  }
}

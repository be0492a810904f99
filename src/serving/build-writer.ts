import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { ENTRY_BYTES } from './format.js';

/** The write buffer starts small and doubles up to 8 MiB: most files a small publish writes are a few KiB. */
const FIRST_BUFFER_BYTES = 64 << 10;
export const MAX_BUFFER_BYTES = 8 << 20;

/**
 * Appends bytes to a file through a buffer of up to 8 MiB; `position` is where the next byte lands.
 * The file is written front to back only, so hashing what is written gives the file's SHA-256
 * without reading it again. The buffer grows with what is written rather than starting at its
 * largest: a publish every few seconds would otherwise allocate tens of MiB of buffers each time,
 * and V8 answers that much external memory with a run of full collections.
 */
export class Writer {
  private buffer = Buffer.allocUnsafe(FIRST_BUFFER_BYTES);
  private used = 0;
  private readonly hash = createHash('sha256');
  position = 0;

  constructor(private readonly fd: number) {}

  string(text: string): number {
    const bytes = Buffer.byteLength(text);
    if (this.room(bytes)) {
      this.buffer.write(text, this.used);
      this.used += bytes;
    } else {
      const data = Buffer.from(text);
      this.hash.update(data);
      writeAll(this.fd, data);
    }
    this.position += bytes;
    return bytes;
  }

  entry(key: number, aux: number, length: number, extraLength: number, offset: number, extraOffset: number): void {
    this.room(ENTRY_BYTES);
    const at = this.used;
    this.buffer.writeDoubleLE(key, at);
    this.buffer.writeUInt32LE(aux, at + 8);
    this.buffer.writeUInt32LE(length, at + 12);
    this.buffer.writeUInt32LE(extraLength, at + 16);
    this.buffer.writeUInt32LE(0, at + 20);
    this.buffer.writeDoubleLE(offset, at + 24);
    this.buffer.writeDoubleLE(extraOffset, at + 32);
    this.used += ENTRY_BYTES;
    this.position += ENTRY_BYTES;
  }

  bytes(data: Uint8Array): void {
    if (this.room(data.length)) {
      this.buffer.set(data, this.used);
      this.used += data.length;
    } else {
      this.hash.update(data);
      writeAll(this.fd, data);
    }
    this.position += data.length;
  }

  /** Makes room for `n` more bytes (grows the buffer, else flushes it); false when `n` exceeds the largest buffer. */
  private room(n: number): boolean {
    if (this.buffer.length - this.used >= n) return true;
    if (this.buffer.length < MAX_BUFFER_BYTES) {
      let size = this.buffer.length * 2;
      while (size < this.used + n && size < MAX_BUFFER_BYTES) size *= 2;
      const grown = Buffer.allocUnsafe(Math.min(size, MAX_BUFFER_BYTES));
      this.buffer.copy(grown, 0, 0, this.used);
      this.buffer = grown;
      if (this.buffer.length - this.used >= n) return true;
    }
    this.flush();
    return n <= this.buffer.length;
  }

  flush(): void {
    this.hash.update(this.buffer.subarray(0, this.used));
    writeAll(this.fd, this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  /** The SHA-256 of everything written (call once, after the last flush). */
  digest(): string {
    return this.hash.digest('hex');
  }
}

function writeAll(fd: number, data: Uint8Array): void {
  for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done);
}

import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { SvcError } from '../errors.js';

/** Where `svc compress` writes its JSON: stdout, or a file replaced atomically. */
export interface OutputSink {
  write(text: string): Promise<void>;
  /** Finishes the output (for a file: renames it into place). */
  commit(): Promise<void>;
  /** Gives up: a file output leaves no trace, the previous file stays as it was. */
  abort(): Promise<void>;
}

async function writeAll(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

/** stdout, with backpressure; a closed pipe (`| head`) ends the process quietly. */
export function stdoutSink(): OutputSink {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  return {
    write: (text) => writeAll(process.stdout, text),
    async commit() {},
    async abort() {},
  };
}

function outputError(path: string, err: unknown): SvcError {
  const code = (err as NodeJS.ErrnoException).code;
  const problem =
    code === 'ENOENT'
      ? 'its folder does not exist'
      : code === 'EACCES'
        ? 'permission denied'
        : `cannot write (${code ?? String(err)})`;
  return new SvcError('SVC_BAD_INPUT', `--output ${path}: ${problem}`, { cause: err });
}

/**
 * A file output written to a temporary file beside `path` and renamed over
 * it on commit, so readers see the old file or the whole new one, never a
 * partial write.
 */
export async function openFileSink(path: string): Promise<OutputSink> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const stream: WriteStream = createWriteStream(tmp, { flags: 'wx' });
  let failure: unknown;
  stream.on('error', (err) => {
    failure = err;
  });
  try {
    await once(stream, 'open');
  } catch (err) {
    throw outputError(path, err);
  }
  const check = () => {
    if (failure !== undefined) throw outputError(path, failure);
  };
  return {
    async write(text) {
      check();
      await writeAll(stream, text);
    },
    async commit() {
      check();
      stream.end();
      await once(stream, 'finish');
      try {
        await rename(tmp, path);
      } catch (err) {
        await unlink(tmp).catch(() => undefined);
        throw outputError(path, err);
      }
    },
    async abort() {
      stream.destroy();
      await unlink(tmp).catch(() => undefined);
    },
  };
}

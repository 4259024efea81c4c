import { openFileCcrStore } from '../ccr/index.js';
import type { CcrStore } from '../ccr/store.js';
import type { Config } from '../config/options.js';
import { isSvcError } from '../errors.js';
import { createLogger } from '../log.js';
import { type CompressFn, type CompressOutput, compressInput } from './compress-input.js';
import type { InputFormatChoice } from './detect-input.js';
import { openFileSink, stdoutSink } from './output.js';
import { planInputs, readSource } from './read-input.js';
import { type CompressSavingsRecord, recordCompressSavings } from './record-savings.js';
import type { SummaryRow } from './summary-table.js';

/** Exit codes of `svc compress` (documented in docs/cli.md). */
export const EXIT = { OK: 0, BELOW_FAIL_UNDER: 1, BAD_INPUT: 2, COMPRESSION_FAILED: 3 } as const;

/** Everything `svc compress` was asked, flags already parsed. */
export interface CompressRunOptions {
  files: string[];
  config: Config;
  model: string | undefined;
  inputFormat: InputFormatChoice;
  output: string | undefined;
  messagesOnly: boolean;
  pretty: boolean;
  summary: boolean;
  /** Percent; exit 1 when total savings fall below it. */
  failUnder: number | undefined;
  record: boolean;
  /** Injectable for tests. */
  compress?: CompressFn;
  ccr?: CcrStore;
  /** One line to stderr; default process.stderr. */
  stderr?: (text: string) => void;
}

function outputLine(out: CompressOutput, file: string | undefined, options: CompressRunOptions): string {
  const payload = options.messagesOnly
    ? file === undefined
      ? out.messages
      : { messages: out.messages }
    : out;
  const value = file === undefined ? payload : { file, ...payload };
  // Several inputs are JSON lines: one line per file, never indented.
  return `${JSON.stringify(value, null, options.pretty && file === undefined ? 2 : undefined)}\n`;
}

/**
 * Runs `svc compress` over its inputs: one compression result per input
 * (JSON; one JSON line per file when there are several), the `--summary`
 * table on stderr, `--fail-under`, savings recording. Returns the exit code;
 * every error is one line on stderr, never a stack trace.
 */
export async function runCompress(options: CompressRunOptions): Promise<number> {
  const stderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  const fail = (message: string) => stderr(`svc compress: error: ${message}\n`);
  const warn = (message: string) => stderr(`svc compress: warning: ${message}\n`);
  const { config } = options;
  let ccr = options.ccr;
  const openCcr = () => {
    ccr ??= openFileCcrStore(config, { logger: createLogger({ level: 'warn' }) });
    return ccr;
  };
  // The engine (and its tokenizer tables) loads on the first well-formed input only:
  // bad input is reported without paying for it.
  const loadEngine = () => import('../engine/index.js');
  let compress: CompressFn =
    options.compress ??
    (async (messages, opts, deps) => (await loadEngine()).compressMessages(messages, opts, deps));
  let closeMl: (() => Promise<void>) | undefined;
  if (config.mlcompress) {
    // Same ML pass as the proxy: loaded once per run; a missing runtime or model is a warning.
    const { loadMlCompressor, withMlPass } = await import('../ml/index.js');
    const { mlPreflight } = await import('../ml/detect.js');
    const pre = mlPreflight({
      enabled: true,
      device: config.mlcompressDevice,
      rate: config.mlcompressRate,
      modelDir: config.mlcompressModel,
    });
    if (pre) warn(pre.text);
    const ml = await loadMlCompressor(config, createLogger({ level: 'warn' }));
    if (ml) {
      compress = withMlPass(compress, ml);
      closeMl = () => ml.close();
    }
  }
  let code: number = EXIT.OK;
  const rows: SummaryRow[] = [];
  const records: CompressSavingsRecord[] = [];
  let failed = 0;

  let plan: Awaited<ReturnType<typeof planInputs>>;
  let sink: Awaited<ReturnType<typeof openFileSink>>;
  try {
    plan = await planInputs(options.files);
    sink = options.output ? await openFileSink(options.output) : stdoutSink();
  } catch (err) {
    if (!isSvcError(err)) throw err;
    fail(err.message);
    return EXIT.BAD_INPUT;
  }

  for (const source of plan.sources) {
    try {
      const text = await readSource(source);
      const done = await compressInput(text, {
        where: source.label,
        inputFormat: options.inputFormat,
        model: options.model,
        config,
        ccr: openCcr,
        compress,
        warn,
      });
      await sink.write(outputLine(done.output, plan.many ? source.label : undefined, options));
      const { tokens_before: before, tokens_after: after, tokens_saved: saved } = done.output;
      const { encodingForModel } = await import('../engine/tokens.js');
      rows.push({
        label: source.label,
        format: done.format,
        model: done.model,
        before,
        after,
        saved,
        transforms: done.output.transforms_applied,
        exact: encodingForModel(done.model).exact,
      });
      records.push({
        time: new Date(),
        input: source.label,
        model: done.model,
        tokensBefore: before,
        tokensAfter: after,
        tokensSaved: saved,
      });
    } catch (err) {
      failed++;
      // Anything that is not an SvcError is a bug of ours: still one line, exit 3.
      const known = isSvcError(err);
      fail(
        known
          ? err.message
          : `${source.label}: internal error: ${err instanceof Error ? err.message : String(err)}`,
      );
      // Bad input outranks a compression failure: it is the one the user can fix.
      if (known && err.code !== 'SVC_COMPRESSION_FAILED') code = EXIT.BAD_INPUT;
      else if (code !== EXIT.BAD_INPUT) code = EXIT.COMPRESSION_FAILED;
      if (!plan.many) break;
    }
  }

  try {
    if (rows.length > 0) await sink.commit();
    else await sink.abort();
  } catch (err) {
    if (!isSvcError(err)) throw err;
    fail(err.message);
    code = EXIT.BAD_INPUT;
  }
  await ccr?.close?.();
  await closeMl?.();
  // The summary table (cli-table3 and its width helpers) loads only when it is asked for.
  const summaryTable = () => import('./summary-table.js');
  if (options.summary && rows.length > 0) {
    stderr((await summaryTable()).renderSummary(rows, { many: plan.many, failed }));
  }
  if (options.record && records.length > 0) {
    await recordCompressSavings(config, records).catch((err: unknown) =>
      warn(
        `savings not recorded in ${config.savingsPath}: ${err instanceof Error ? err.message : String(err)}`,
      ),
    );
  }
  if (code === EXIT.OK && options.failUnder !== undefined) {
    const savings = (await summaryTable()).totalSavingsPercent(rows);
    if (savings < options.failUnder) {
      fail(`total savings ${savings.toFixed(1)}% are below --fail-under ${options.failUnder}%`);
      code = EXIT.BELOW_FAIL_UNDER;
    }
  }
  return code;
}

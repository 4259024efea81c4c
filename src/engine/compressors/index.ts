import { compressCode } from './code.js';
import { compressDiff } from './diff.js';
import { compressHtml } from './html.js';
import { compressJson } from './json.js';
import { compressLog } from './log.js';
import { compressProse } from './prose.js';
import { compressSearch } from './search.js';
import { compressTable } from './table.js';
import { compressText } from './text.js';
import type { Compressor, ContentType } from './types.js';

export type { CompressContext, Compressed, Compressor, ContentType } from './types.js';

/** One compressor per content type. */
export const COMPRESSORS: Readonly<Record<ContentType, Compressor>> = {
  json: compressJson,
  log: compressLog,
  search: compressSearch,
  diff: compressDiff,
  table: compressTable,
  text: compressText,
  code: compressCode,
  html: compressHtml,
  prose: compressProse,
};

#!/usr/bin/env node
// Build step, after tsc: bundles what the installed package would otherwise
// carry as large dependency trees for a small part of their code.
// - the two gpt-tokenizer encodings svc counts with (o200k_base, cl100k_base)
//   into dist/vendor: gpt-tokenizer installs 55 MB (every encoding in three
//   module formats, with source maps). `src/engine/tokens.ts` imports them as
//   `#tokenizer/o200k` and `#tokenizer/cl100k` (package.json "imports"): the
//   bundles by default, gpt-tokenizer itself under the `svc-source` condition
//   that the type checker and the tests use.
// - dist/src/mcp/sdk.js (the MCP SDK's server and zod, for `svc mcp`), in
//   place: about 17 MB of packages become one file.
import { copyFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'rolldown';

const root = resolve(import.meta.dirname, '..');
const vendor = join(root, 'dist/vendor');
mkdirSync(vendor, { recursive: true });

async function bundle(input, file, format) {
  await build({
    input,
    cwd: root,
    platform: 'node',
    logLevel: 'warn',
    output: { file, format, exports: 'named', minify: true, sourcemap: false },
  });
}

// The tokenizers: gpt-tokenizer's encoder bundled once per module format, and each encoding's
// merge ranks as a prebuilt index, read on the first count. gpt-tokenizer ships the ranks as a
// 2 MB JS array literal (compiling it took ~300 ms and ~105 MB of RSS); JSON.parse of the same
// data still took ~50 ms, and gpt-tokenizer's constructor ~40 ms more to build its string -> rank
// Map (plus the garbage of both). The index needs neither: `NAME.tokens` is every token string
// in rank order, concatenated (UTF-16LE, read as is), and `NAME.index` an Int32Array of
// [ranks, string count, table size, offsets into the tokens (ranks + 1), open-addressing hash
// table of rank + 1 (FNV-1a over UTF-16 code units, linear probing)]; the few tokens that are not
// valid UTF-8 stay byte arrays in `NAME.bytes.json`, as gpt-tokenizer keeps them. The lookup
// replaces the core's Map and returns the same rank for every string (bench/tokenizers.js and
// test/engine/tokens.test.js check the counts, bench/perf.js the cost).
await bundle('gpt-tokenizer/GptEncoding', join(vendor, 'gpt-encoding.js'), 'esm');
await bundle('gpt-tokenizer/GptEncoding', join(vendor, 'gpt-encoding.cjs'), 'cjs');

/** FNV-1a over UTF-16 code units; the same function as `hash` in RANK_INDEX below. */
function fnv(key) {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

for (const name of ['o200k_base', 'cl100k_base']) {
  const { default: ranks } = await import(`gpt-tokenizer/bpeRanks/${name}`);
  const n = ranks.length;
  const offsets = new Int32Array(n + 1);
  const parts = [];
  const bytes = {};
  let at = 0;
  let strings = 0;
  for (let r = 0; r < n; r++) {
    offsets[r] = at;
    const v = ranks[r];
    if (typeof v === 'string') {
      if (v.length === 0) throw new Error(`${name}: an empty token string at rank ${r}`);
      parts.push(v);
      at += v.length;
      strings++;
    } else if (v !== undefined) bytes[r] = v;
  }
  offsets[n] = at;
  let size = 1;
  while (size < strings * 2) size *= 2;
  const table = new Int32Array(size);
  const blob = parts.join('');
  for (let r = 0; r < n; r++) {
    const v = ranks[r];
    if (typeof v !== 'string') continue;
    // A string seen twice keeps its last rank, as gpt-tokenizer's Map does.
    for (let i = fnv(v) & (size - 1); ; i = (i + 1) & (size - 1)) {
      const c = table[i] - 1;
      if (c < 0 || ranks[c] === v) {
        table[i] = r + 1;
        break;
      }
    }
  }
  const index = new Int32Array(3 + n + 1 + size);
  index.set([n, strings, size]);
  index.set(offsets, 3);
  index.set(table, 4 + n);
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1)
    throw new Error('the index is written little-endian');
  writeFileSync(join(vendor, `${name}.tokens`), Buffer.from(blob, 'utf16le'));
  writeFileSync(join(vendor, `${name}.index`), new Uint8Array(index.buffer));
  writeFileSync(join(vendor, `${name}.bytes.json`), JSON.stringify(bytes));
}

// Builds an encoding from its index (see above): gpt-tokenizer's own constructor is given no
// tokens (the byte-array ones are listed on first need), then its string -> rank Map, rank ->
// token lookups and the count's BPE are replaced.
const RANK_INDEX = `function hash(key) {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
/** gpt-tokenizer's order of byte arrays (compareUint8Arrays). */
function compareBytes(a, b) {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
// The files are read so that no file-sized buffer is freed (issue 19): glibc serves a large
// allocation with a mapping of its own, and when one is freed it raises its mmap threshold to that
// size, and its trim threshold (the freed memory each arena keeps) to twice that, for the rest of
// the process. The index read and copied made it 2.9 and 5.8 MB. Both files are now read once,
// where they stay: into the chunker's compiled memory (o200k_base), or into a buffer of their own.
function viewOf(file, Type) {
  return file.byteOffset % Type.BYTES_PER_ELEMENT === 0
    ? new Type(file.buffer, file.byteOffset, file.byteLength / Type.BYTES_PER_ELEMENT)
    : new Type(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength));
}
function fromIndex(GptEncoding, name, dir, chunker) {
  const indexPath = join(dir, name + '.index');
  const tokensPath = join(dir, name + '.tokens');
  // the rank index (32-bit integers) and the token text (UTF-16 code units)
  const placed = chunker?.placeRanks(indexPath, tokensPath);
  const ints = placed ? placed.ints : viewOf(readFileSync(indexPath), Int32Array);
  const units = placed ? placed.units : viewOf(readFileSync(tokensPath), Uint16Array);
  const n = ints[0];
  const strings = ints[1];
  const mask = ints[2] - 1;
  const offsets = ints.subarray(3, 4 + n);
  const table = ints.subarray(4 + n);
  const bytes = JSON.parse(readFileSync(join(dir, name + '.bytes.json'), 'utf8'));
  const decoder = [];
  for (const rank in bytes) decoder[rank] = bytes[rank];
  decoder.length = n;
  // The processor's constructor walks the decoder with forEach, which visits every index of the
  // sparse array (n of them, ~10 ms for o200k), to list the tokens that are not valid UTF-8. It
  // visits none here: those lists are read only by gpt-tokenizer's own BPE, to look up a pair of
  // bytes that is not valid UTF-8 (encode, and a count's chunk with a lone surrogate; other counts
  // use mergeCount below), and to decode such a token. nonUtf makes them on first need, as the
  // constructor does. Made at load, they took ~8 ms of a short process's start.
  Object.defineProperty(decoder, 'forEach', { value() {} });
  const api = GptEncoding.getEncodingApi(name, () => decoder);
  const core = api.bytePairEncodingCoreProcessor;
  const Core = Object.getPrototypeOf(core);
  let listed = false;
  const nonUtf = () => {
    if (listed) return;
    listed = true;
    const sorted = [];
    for (const rank in bytes) {
      const tokenBytes = new Uint8Array(bytes[rank]);
      sorted.push([tokenBytes, Number(rank)]);
      core.bytePairNonUtfRankDecoder.set(Number(rank), tokenBytes);
    }
    core.bytePairNonUtfSortedEncoder = sorted.sort((a, b) => compareBytes(a[0], b[0]));
  };
  core.binarySearch = function (key) {
    nonUtf();
    return Core.binarySearch.call(this, key);
  };
  const NONE = 0x7fffffff;
  /** The rank of text[start, end), whose hash is h, or NONE: the lookup of get() below, on a range. */
  const rankIn = (text, start, end, h) => {
    const length = end - start;
    for (let i = (h >>> 0) & mask; ; i = (i + 1) & mask) {
      const rank = table[i] - 1;
      if (rank < 0) return NONE;
      const at = offsets[rank];
      if (offsets[rank + 1] - at !== length) continue;
      let k = 0;
      while (k < length && units[at + k] === text.charCodeAt(start + k)) k++;
      if (k === length) return rank;
    }
  };
  // Whether text[start, end) is a token of its own, looked up where it stands in the text.
  // The tokens found recently are kept by hash in a small table (where they sit in the token text,
  // and their length), checked character by character: it stays in the processor's cache, where
  // the rank index (megabytes) does not.
  const HOT = 1 << 14;
  const hotHash = new Int32Array(HOT);
  const hotAt = new Int32Array(HOT);
  const hotLength = new Int32Array(HOT);
  const isToken = (text, start, end) => {
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    const length = end - start;
    const slot = h & (HOT - 1);
    if (hotHash[slot] === h && hotLength[slot] === length) {
      const at = hotAt[slot];
      let k = 0;
      while (k < length && units[at + k] === text.charCodeAt(start + k)) k++;
      if (k === length) return true;
    }
    const rank = rankIn(text, start, end, h);
    if (rank === NONE) return false;
    hotHash[slot] = h;
    hotAt[slot] = offsets[rank];
    hotLength[slot] = length;
    return true;
  };
  core.bytePairStringRankEncoder = {
    get(key) {
      if (key.length === 0) return undefined;
      const rank = rankIn(key, 0, key.length, hash(key));
      return rank === NONE ? undefined : rank;
    },
  };
  core.tryDecodeToken = function (rank) {
    if (rank >= 0 && rank < n) {
      const at = offsets[rank];
      const end = offsets[rank + 1];
      if (end > at) return String.fromCharCode.apply(null, units.subarray(at, end));
      nonUtf();
      const fromBinary = this.bytePairNonUtfRankDecoder.get(rank);
      if (fromBinary) return fromBinary;
    }
    return this.specialTokensDecoder.get(rank);
  };
  // Counting: BPE runs per pre-token (a chunk of the split regex), so a chunk's count depends on
  // the chunk alone. A chunk that is a token of its own (most are) counts 1, looked up in the rank
  // index where it stands in the text (no string cut out, no Map). Counts of recent short chunks
  // of several tokens are kept, and each later sight of one is a Map lookup instead of BPE merges;
  // the chunks and special tokens are found exactly as gpt-tokenizer's countNative finds them, so
  // every count is the same. Its merge cache (token arrays of up to 100,000 chunks) mostly served
  // counting; encode keeps a small one.
  const split = new RegExp(core.tokenSplitRegex.source, core.tokenSplitRegex.flags);
  // BPE of a chunk, counted: the processor's bytePairMerge over the chunk's UTF-8 bytes, the same
  // merges in the same order, so the same number of parts. The processor cuts out each pair of
  // parts, checks it and decodes it (a TextDecoder call per lookup), or finds a pair that is not
  // valid UTF-8 by binary search in a list it sorts at load; that made most of a short process's
  // count and ~8 ms of its start. Here a pair that starts and ends where a character does (valid
  // UTF-8, as the chunk is) is looked up where it stands in the chunk, and any other pair (part of
  // a character) in a map of the tokens that are not valid UTF-8, made on first need. A chunk
  // with a lone surrogate (which UTF-8 cannot carry) goes to the processor.
  const rankAt = (text, start, end) => {
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return rankIn(text, start, end, h);
  };
  let byteRanks;
  const byteRankAt = (from, start, end) => {
    if (byteRanks === undefined) {
      byteRanks = new Map();
      for (const rank in bytes) byteRanks.set(String.fromCharCode.apply(null, bytes[rank]), Number(rank));
    }
    let key = '';
    for (let i = start; i < end; i++) key += String.fromCharCode(from[i]);
    const rank = byteRanks.get(key);
    return rank === undefined ? NONE : rank;
  };
  // the chunk's UTF-8 bytes, the character each byte offset starts (-1 inside one), the parts
  // [starts[i], starts[i + 1]) and the rank of parts i and i + 1 joined
  let utf8 = new Uint8Array(256);
  let unitAt = new Int32Array(257);
  let starts = new Int32Array(257);
  let pairs = new Int32Array(257);
  const pairRank = (chunk, start, end) => {
    const from = unitAt[start];
    const to = unitAt[end];
    return from >= 0 && to >= 0 ? rankAt(chunk, from, to) : byteRankAt(utf8, start, end);
  };
  const mergeCount = (chunk) => {
    const length = chunk.length;
    if (3 * length >= utf8.length) {
      utf8 = new Uint8Array(6 * length);
      unitAt = new Int32Array(6 * length + 1);
      starts = new Int32Array(6 * length + 1);
      pairs = new Int32Array(6 * length + 1);
    }
    let n = 0;
    for (let i = 0; i < length; i++) {
      const c = chunk.charCodeAt(i);
      unitAt[n] = i;
      if (c < 0x80) utf8[n++] = c;
      else if (c < 0x800) {
        utf8[n++] = 0xc0 | (c >> 6);
        unitAt[n] = -1;
        utf8[n++] = 0x80 | (c & 0x3f);
      } else if (c < 0xd800 || c > 0xdfff) {
        utf8[n++] = 0xe0 | (c >> 12);
        unitAt[n] = -1;
        utf8[n++] = 0x80 | ((c >> 6) & 0x3f);
        unitAt[n] = -1;
        utf8[n++] = 0x80 | (c & 0x3f);
      } else {
        const low = chunk.charCodeAt(i + 1);
        if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return core.bytePairEncode(chunk).length;
        const p = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
        utf8[n++] = 0xf0 | (p >> 18);
        unitAt[n] = -1;
        utf8[n++] = 0x80 | ((p >> 12) & 0x3f);
        unitAt[n] = -1;
        utf8[n++] = 0x80 | ((p >> 6) & 0x3f);
        unitAt[n] = -1;
        utf8[n++] = 0x80 | (p & 0x3f);
      }
    }
    unitAt[n] = length;
    for (let i = 0; i <= n; i++) {
      starts[i] = i;
      pairs[i] = i < n - 1 ? pairRank(chunk, i, i + 2) : NONE;
    }
    let m = n + 1;
    for (;;) {
      let lowest = NONE;
      let at = -1;
      for (let i = 0; i < m - 1; i++) {
        if (pairs[i] < lowest) {
          lowest = pairs[i];
          at = i;
        }
      }
      if (at < 0) return m - 1;
      for (let i = at + 1; i < m - 1; i++) starts[i] = starts[i + 1];
      for (let i = at; i < m - 1; i++) pairs[i] = pairs[i + 1];
      m--;
      pairs[at] = at + 2 < m ? pairRank(chunk, starts[at], starts[at + 2]) : NONE;
      if (at > 0) pairs[at - 1] = pairRank(chunk, starts[at - 1], starts[at + 1]);
    }
  };
  let counts = new Map();
  const countChunk = (chunk) => {
    let c = counts.get(chunk);
    if (c === undefined) {
      c = core.getBpeRankFromString(chunk) !== undefined ? 1 : mergeCount(chunk);
      if (chunk.length <= 48) {
        if (counts.size >= 32768) counts = new Map();
        counts.set(chunk, c);
      }
    }
    return c;
  };
  // o200k_base passes its own ASCII chunker (o200k-chunks.js), which finds the regex's chunks
  const countChunks = chunker
    ? (text) => chunker.sumChunkCounts(text, split, isToken, countChunk)
    : (text) => {
        let total = 0;
        split.lastIndex = 0;
        for (let m = split.exec(text); m !== null; m = split.exec(text)) total += countChunk(m[0]);
        return total;
      };
  core.setMergeCacheSize(4096);
  core.countNative = function (text, allowedSpecial) {
    let total = 0;
    let from = 0;
    for (;;) {
      const next = this.findNextSpecialToken(text, allowedSpecial, from);
      const end = next ? next[0] : text.length;
      total += countChunks(from === 0 && end === text.length ? text : text.slice(from, end));
      if (!next) return total;
      if (this.specialTokensEncoder.get(next[1]) === undefined)
        throw new Error('Special token "' + next[1] + '" is not in the special token encoder.');
      total += 1;
      from = next[0] + next[1].length;
    }
  };
  core.mergeableBytePairRankCount += strings;
  api.vocabularySize = core.mergeableBytePairRankCount + api.specialTokensEncoder.size;
  return api;
}`;

copyFileSync(join(root, 'scripts/vendor/o200k-chunks.js'), join(vendor, 'o200k-chunks.js'));
copyFileSync(join(root, 'scripts/vendor/o200k-chunks-wasm.js'), join(vendor, 'o200k-chunks-wasm.js'));
writeFileSync(
  join(vendor, 'o200k_base.js'),
  `// Generated by scripts/bundle-vendor.js: o200k_base, its rank index loaded on the first count.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GptEncoding } from './gpt-encoding.js';
import * as chunker from './o200k-chunks.js';
${RANK_INDEX}
let api;
const load = () =>
  (api ??= fromIndex(GptEncoding, 'o200k_base', dirname(fileURLToPath(import.meta.url)), chunker));
export function countTokens(text, options) {
  return load().countTokens(text, options);
}
export function encode(text, options) {
  return load().encode(text, options);
}
export function decode(tokens) {
  return load().decode(tokens);
}
/**
 * How many pre-tokens (chunks of the split) a text has, special-token text as plain text: at most
 * its count. Stops counting at 'enough' when given.
 */
export function countChunks(text, enough) {
  return chunker.chunkCount(text, chunkRegex(), enough);
}
/**
 * 'countChunks' from 'from' (0, or where an earlier count stopped), stopping at 'enough': the
 * count and where it stopped ('text.length' at the end).
 */
export function countChunksFrom(text, from, enough = Number.POSITIVE_INFINITY) {
  return chunker.chunkCountFrom(text, chunkRegex(), from, enough);
}
let chunkSplit;
const chunkRegex = () => {
  if (chunkSplit === undefined) {
    const source = load().bytePairEncodingCoreProcessor.tokenSplitRegex;
    chunkSplit = new RegExp(source.source, source.flags);
  }
  return chunkSplit;
};
export const sumChunks = chunker.sumChunks;
`,
);
writeFileSync(
  join(vendor, 'cl100k_base.cjs'),
  `// Generated by scripts/bundle-vendor.js: cl100k_base, its rank index loaded on the first count.
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { GptEncoding } = require('./gpt-encoding.cjs');
${RANK_INDEX}
let api;
const load = () =>
  (api ??= fromIndex(GptEncoding, 'cl100k_base', __dirname));
exports.countTokens = (text, options) => load().countTokens(text, options);
exports.encode = (text, options) => load().encode(text, options);
exports.decode = (tokens) => load().decode(tokens);
`,
);

const sdk = join(root, 'dist/src/mcp/sdk.js');
await bundle(sdk, `${sdk}.bundle`, 'esm');
renameSync(`${sdk}.bundle`, sdk);

// The bundles carry these packages' code: their licences go with them.
for (const pkg of ['gpt-tokenizer', '@modelcontextprotocol/server', 'zod']) {
  const dir = join(root, 'node_modules', pkg);
  copyFileSync(join(dir, 'LICENSE'), join(vendor, `${pkg.replace('/', '__')}.LICENSE`));
}

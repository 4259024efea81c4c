/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4),
 * for tests: it throws on anything a Prometheus server would refuse or that
 * breaks the format's rules (TYPE before samples, families not interleaved,
 * histogram buckets cumulative with a +Inf bucket equal to _count).
 */
export type PromType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: PromType;
  help: string | undefined;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: number): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text))
    throw new Error(`line ${line}: bad value "${text}"`);
  return Number(text);
}

function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1; // after '{'
  for (;;) {
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without "="`);
    const name = text.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name "${name}"`);
    if (name in labels) throw new Error(`line ${line}: duplicate label "${name}"`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value not quoted`);
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape "\\${next}"`);
      } else if (text[j] === '\n') throw new Error(`line ${line}: raw newline in label value`);
      else value += text[j];
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`line ${line}: expected "," or "}" after label`);
  }
}

function familyOf(name: string, families: Map<string, PromFamily>): PromFamily | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = families.get(name.slice(0, -suffix.length));
    if (base && (base.type === 'histogram' || (base.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return undefined;
}

function checkHistogram(family: PromFamily): void {
  const groups = new Map<string, PromSample[]>();
  for (const s of family.samples) {
    if (!s.name.endsWith('_bucket')) continue;
    const { le, ...rest } = s.labels;
    if (le === undefined) throw new Error(`${family.name}: bucket without le`);
    const key = JSON.stringify(rest);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, buckets] of groups) {
    let lastLe = Number.NEGATIVE_INFINITY;
    let lastCount = 0;
    for (const b of buckets) {
      const le = parseValue(b.labels.le!, 0);
      if (le <= lastLe) throw new Error(`${family.name}: buckets not in increasing le order`);
      if (b.value < lastCount) throw new Error(`${family.name}: bucket counts not cumulative`);
      lastLe = le;
      lastCount = b.value;
    }
    if (lastLe !== Number.POSITIVE_INFINITY) throw new Error(`${family.name}: no +Inf bucket`);
    const count = family.samples.find(
      (s) => s.name === `${family.name}_count` && JSON.stringify(s.labels) === key,
    );
    const sum = family.samples.find(
      (s) => s.name === `${family.name}_sum` && JSON.stringify(s.labels) === key,
    );
    if (!count || !sum) throw new Error(`${family.name}: _count or _sum missing`);
    if (count.value !== lastCount)
      throw new Error(`${family.name}: +Inf bucket ${lastCount} != _count ${count.value}`);
  }
}

/** Parses exposition text; throws with the line number on the first violation. */
export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const finished = new Set<string>();
  let current: PromFamily | undefined;
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('text must end with a newline');
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(raw);
      if (!m) return; // a plain comment
      const [, kind, name, rest = ''] = m;
      if (!NAME.test(name!)) throw new Error(`line ${line}: bad metric name "${name}"`);
      let family = families.get(name!);
      if (family && finished.has(name!)) throw new Error(`line ${line}: ${name} metadata after its samples`);
      if (!family) {
        family = { name: name!, type: 'untyped', help: undefined, samples: [] };
        families.set(name!, family);
      }
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`line ${line}: unknown type "${rest}"`);
        if (family.samples.length > 0) throw new Error(`line ${line}: TYPE after samples`);
        family.type = rest as PromType;
      } else {
        if (family.help !== undefined) throw new Error(`line ${line}: second HELP for ${name}`);
        family.help = rest;
      }
      if (current && current !== family) finished.add(current.name);
      current = family;
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw);
    if (!nameMatch) throw new Error(`line ${line}: bad sample "${raw}"`);
    const name = nameMatch[0];
    let rest = raw.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2)
      throw new Error(`line ${line}: bad sample "${raw}"`);
    const value = parseValue(parts[0]!, line);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`line ${line}: bad timestamp`);
    let family = familyOf(name, families);
    if (!family) {
      family = { name, type: 'untyped', help: undefined, samples: [] };
      families.set(name, family);
    }
    if (finished.has(family.name))
      throw new Error(`line ${line}: samples of ${family.name} are not grouped together`);
    if (current && current !== family) finished.add(current.name);
    current = family;
    family.samples.push({ name, labels, value });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

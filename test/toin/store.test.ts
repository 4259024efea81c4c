import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ShapeObservation } from '../../src/engine/context/types.js';
import { shapeAdvice } from '../../src/toin/advice.js';
import { openToinStore } from '../../src/toin/store.js';
import { toinView } from '../../src/toin/view.js';

let dir: string;
let path: string;
const clock = () => Date.parse('2025-01-02T03:04:05Z');
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-toin-'));
  path = join(dir, 'toin.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const obs = (
  event: ShapeObservation['event'],
  shape = 'search#aaaa0000',
  hash = 'a'.repeat(24),
): ShapeObservation => ({
  event,
  shape,
  tool: shape.split('#')[0]!,
  fields: ['id', 'status', 'title'],
  hashes: [hash],
});

describe('TOIN store', () => {
  it('starts empty when the file is missing and writes what it learned', async () => {
    const toin = await openToinStore({ path, now: clock });
    expect(toin.data().shapes).toEqual({});
    toin.observe([obs('compressed'), obs('dropped')]);
    expect(toin.retrieved('a'.repeat(24), ['status', 'nope'])).toEqual(['search#aaaa0000']);
    await toin.flush();
    const file = JSON.parse(await readFile(path, 'utf8'));
    expect(file.schema_version).toBe(1);
    expect(file.shapes['search#aaaa0000']).toMatchObject({
      tool: 'search',
      compressed: 1,
      dropped: 1,
      retrieved: 1,
      retrievedFields: { status: 1 },
    });
    expect(JSON.stringify(file)).not.toMatch(/"value"/);
  });

  it('moves a malformed file aside and starts empty', async () => {
    await writeFile(path, '{"schema_version": 1, "shapes": [oops');
    const toin = await openToinStore({ path, now: clock });
    expect(toin.data().shapes).toEqual({});
    const files = await readdir(dir);
    expect(files).toContain('toin.json.corrupt-2025-01-02T03-04-05-000Z');
    expect(await readFile(join(dir, 'toin.json.corrupt-2025-01-02T03-04-05-000Z'), 'utf8')).toContain('oops');
  });

  it('treats a file of the wrong shape as malformed', async () => {
    await writeFile(path, JSON.stringify({ schema_version: 1, shapes: { x: { tool: 1 } }, hashes: {} }));
    const toin = await openToinStore({ path, now: clock });
    expect(toin.data().shapes).toEqual({});
    expect((await readdir(dir)).some((f) => f.startsWith('toin.json.corrupt-'))).toBe(true);
  });

  it('adds counts of two processes sharing the file instead of overwriting', async () => {
    const a = await openToinStore({ path, now: clock });
    const b = await openToinStore({ path, now: clock });
    a.observe([obs('compressed')]);
    b.observe([obs('compressed', undefined, 'b'.repeat(24)), obs('compressed', undefined, 'c'.repeat(24))]);
    // the same content seen again (the next turn re-sends it) is not counted twice
    b.observe([obs('compressed', undefined, 'c'.repeat(24))]);
    await a.flush();
    await b.flush();
    const c = await openToinStore({ path, now: clock });
    expect(c.data().shapes['search#aaaa0000']!.compressed).toBe(3);
    expect(b.data().shapes['search#aaaa0000']!.compressed).toBe(3);
  });

  it('advice: often-retrieved shapes are conservative and important, never-retrieved ones compressed harder', async () => {
    const toin = await openToinStore({ path, now: clock });
    for (let i = 0; i < 8; i += 1)
      toin.observe([obs('compressed', 'often#00000001', `${i}`.padStart(24, 'b'))]);
    for (let i = 0; i < 4; i += 1) toin.retrieved(`${i}`.padStart(24, 'b'), []);
    for (let i = 0; i < 30; i += 1)
      toin.observe([obs('compressed', 'never#00000002', `${i}`.padStart(24, 'c'))]);
    toin.observe([obs('compressed', 'young#00000003')]);
    const advice = toin.advice().shapes;
    expect(advice['often#00000001']!.importance).toBe(1);
    expect(advice['often#00000001']!.keepFactor).toBe(2);
    expect(advice['never#00000002']!.importance).toBeCloseTo(0.2);
    expect(advice['never#00000002']!.keepFactor).toBeLessThan(1);
    expect(advice['young#00000003']).toBeUndefined();
    const view = toinView(toin.data(), path);
    expect(view.shapes[0]).toMatchObject({ shape: 'never#00000002', compressed: 30, retrieval_rate: 0 });
    expect(view.shapes.find((s) => s.shape === 'often#00000001')).toMatchObject({
      retrieved: 4,
      retrieval_rate: 0.5,
      keep_factor: 2,
    });
  });

  it('shapeAdvice rises with the retrieval rate', () => {
    const rec = (compressed: number, retrieved: number) =>
      shapeAdvice({
        tool: 't',
        fields: [],
        compressed,
        dropped: 0,
        retrieved,
        retrievedFields: {},
        firstSeen: '',
        lastSeen: '',
      });
    expect(rec(1, 0)).toBeUndefined();
    expect(rec(20, 1)!.importance).toBeGreaterThan(0.5);
    expect(rec(20, 2)!.importance).toBeGreaterThan(rec(20, 1)!.importance);
    expect(rec(5, 0)!.importance).toBeLessThan(0.5);
    expect(rec(40, 0)!.importance).toBeLessThan(rec(5, 0)!.importance);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCompressCommand } from '../../src/cli/compress-command.js';
import { engineMemoBytes } from '../../src/engine/memo-budget.js';
import { applyJsonEdits, JsonEdits } from '../../src/json/spans.js';
import { requestPaths } from '../../src/quiet.js';

// A one-shot `svc compress` exits once its output is written: the long strings whose ends the
// splicer found in the text are not measured for turns that never come (issue 19: that took
// 8-12 ms of the command's CPU while it closed its files). The output is the same either way.

it('svc compress serves no later turn: long strings are spliced exactly and not measured after', async () => {
  const home = await mkdtemp(join(tmpdir(), 'svc-one-shot-'));
  const homeBefore = process.env.SERVICE_HOME;
  process.env.SERVICE_HOME = home;
  try {
    const input = join(home, 'in.json');
    await writeFile(input, JSON.stringify({ messages: [{ role: 'user', content: 'hello' }] }));
    const out = join(home, 'out.json');
    const code = await runCompressCommand({ record: false, output: out, 'input-format': 'auto' }, [input]);
    expect(code).toBe(0);
    expect(requestPaths.laterTurns).toBe(false);

    const long = 'a "quoted" word, a \\ backslash, caf\u00e9 and a tab\t. '.repeat(40);
    const doc = `{"m": [{"content": ${JSON.stringify(long)}, "k": "v"}, {"content": "last"}]}`;
    const edits = new JsonEdits();
    edits.set(['m', 0, 'k'], 'V');
    const before = engineMemoBytes().spelled_lengths;
    expect(applyJsonEdits(doc, edits, JSON.parse(doc))).toBe(doc.replace('"k": "v"', '"k": "V"'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(engineMemoBytes().spelled_lengths).toBe(before);
  } finally {
    if (homeBefore === undefined) delete process.env.SERVICE_HOME;
    else process.env.SERVICE_HOME = homeBefore;
    await rm(home, { recursive: true, force: true });
  }
});

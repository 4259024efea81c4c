import { Command } from '@oclif/core';
import { resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { openToinStore } from '../src/toin/store.js';
import { type ToinView, toinView } from '../src/toin/view.js';

/** `svc toin`: what TOIN learned per tool-output shape. */
export default class Toin extends Command {
  static override summary = 'Show what TOIN learned per tool-output shape';
  static override description =
    'Per tool-output shape (tool name + hash of field names and types): how often it was compressed, dropped and retrieved, which fields retrieval asked for, and the advice the engine gets. Reads ~/.svc/toin.json (SERVICE_TOIN_PATH).';
  static override examples = ['<%= config.bin %> toin', '<%= config.bin %> toin --json'];
  static override enableJsonFlag = true;

  async run(): Promise<ToinView> {
    await this.parse(Toin);
    let path: string;
    try {
      path = resolveConfig({ env: process.env }).toinPath;
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    const view = toinView((await openToinStore({ path })).data(), path);
    if (!this.jsonEnabled()) {
      if (view.shapes.length === 0) this.log(`TOIN has learned nothing yet (${path}).`);
      else {
        // Fitted to the width (80 columns in a pipe), colour only on a terminal without NO_COLOR.
        const { fitTable, hiddenNote } = await import('../src/ui/fit-table.js');
        const rows: string[][] = [];
        for (const s of view.shapes) {
          const asked = Object.entries(s.retrieved_fields)
            .map(([f, n]) => `${f}:${n}`)
            .join(' ');
          rows.push(
            [
              s.shape,
              s.compressed,
              s.dropped,
              s.retrieved,
              s.retrieval_rate ?? '-',
              s.importance ?? '-',
              s.keep_factor ?? '-',
              asked,
            ].map(String),
          );
        }
        const { text, hidden } = fitTable(
          [
            { head: 'shape', wrap: true },
            { head: 'compressed', right: true },
            { head: 'dropped', right: true, drop: 2 },
            { head: 'retrieved', right: true },
            { head: 'rate', right: true },
            { head: 'importance', right: true, drop: 1 },
            { head: 'keep', right: true },
            { head: 'fields asked', wrap: true },
          ],
          rows,
        );
        this.log(text);
        const note = hiddenNote(hidden, 'all columns: --json');
        if (note) this.log(note.trimEnd());
      }
    }
    return view;
  }
}

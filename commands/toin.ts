import { Command } from '@oclif/core';
import Table from 'cli-table3';
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
        const table = new Table({
          head: ['shape', 'compressed', 'dropped', 'retrieved', 'rate', 'importance', 'keep', 'fields asked'],
        });
        for (const s of view.shapes) {
          const asked = Object.entries(s.retrieved_fields)
            .map(([f, n]) => `${f}:${n}`)
            .join(' ');
          table.push([
            s.shape,
            s.compressed,
            s.dropped,
            s.retrieved,
            s.retrieval_rate ?? '-',
            s.importance ?? '-',
            s.keep_factor ?? '-',
            asked,
          ]);
        }
        this.log(table.toString());
      }
    }
    return view;
  }
}

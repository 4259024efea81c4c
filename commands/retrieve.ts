import { Args, Command, Flags } from '@oclif/core';

/** `svc retrieve HASH`: prints an original the compressor stored in the CCR store. */
export default class Retrieve extends Command {
  static override summary = 'Print the original content stored for a CCR hash';
  static override description =
    `Markers such as "[svc: 87 items omitted; retrieve with svc_retrieve hash=3fa9c2e1b4d5a6f7c8d9e0a1]" name a hash; this prints, byte for byte, what was removed there, from the durable CCR store (~/.svc/ccr, SERVICE_CCR_PATH).

Exit codes: 0 found, 2 not a hash, or unknown or expired hash.`;
  static override examples = [
    '<%= config.bin %> retrieve 3fa9c2e1b4d5a6f7c8d9e0a1',
    '<%= config.bin %> retrieve hash=3fa9c2e1b4d5a6f7c8d9e0a1 > original.json',
    '<%= config.bin %> retrieve 3fa9c2e1b4d5a6f7c8d9e0a1 --query status=failed',
  ];
  static override args = {
    hash: Args.string({
      description: 'the hash of a marker (24 hex digits; "hash=" prefix allowed)',
      required: true,
      ignoreStdin: true,
    }),
  };

  static override flags = {
    query: Flags.string({
      char: 'q',
      summary: 'print only the matching items (JSON arrays) or lines: words, "phrases", field=value',
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Retrieve);
    const { retrieveOriginal } = await import('../src/cli/retrieve-run.js');
    const code = await retrieveOriginal(args.hash, flags.query === undefined ? {} : { query: flags.query });
    if (code !== 0) this.exit(code);
  }
}

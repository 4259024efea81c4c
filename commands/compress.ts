import { Args, Command, Flags } from '@oclif/core';
import { configFlags, envOnlyHelp } from '../src/config/flags.js';

/** `svc compress`: compress conversations offline, no network. */
export default class Compress extends Command {
  static override summary = 'Compress conversations offline and print the compression result JSON';
  static override description =
    `Reads a chat-completions request body {"model", "messages"}, a bare messages array, or a messages-format body (content blocks with tool_use / tool_result) from FILE or stdin, and prints the compression result JSON with its messages in the input's own format. Several files or a folder give one JSON line per file.

Exit codes: 0 done, 1 total savings below --fail-under, 2 bad input or flags, 3 compression failed.

${envOnlyHelp('compress')}`;
  static override examples = [
    '<%= config.bin %> compress fixtures/samples/agent-session.json --summary',
    'cat convo.json | <%= config.bin %> compress --model gpt-4.1 > compressed.json',
    '<%= config.bin %> compress fixtures/samples --summary --fail-under 30',
  ];
  static override strict = false;
  static override args = {
    // ignoreStdin: oclif would otherwise read a piped stdin (line by line, 10 ms timeout) as the argument.
    file: Args.string({
      description: 'JSON file or folder of *.json files (several allowed); stdin when none or -',
      ignoreStdin: true,
    }),
  };
  static override flags = {
    model: Flags.string({ summary: 'model for token counting when the input names none (default gpt-4o)' }),
    output: Flags.string({
      char: 'o',
      summary: 'write the JSON to this file (atomically) instead of stdout',
    }),
    'messages-only': Flags.boolean({ summary: 'print only the compressed messages, not the whole result' }),
    summary: Flags.boolean({
      summary: 'print a table of tokens before/after, savings, ratio and transforms on stderr',
    }),
    'fail-under': Flags.string({
      summary: 'exit 1 when total savings are below this percentage',
      helpValue: 'PCT',
    }),
    'input-format': Flags.string({
      summary: 'input message format',
      options: ['auto', 'chat', 'messages'],
      default: 'auto',
    }),
    pretty: Flags.boolean({ summary: 'indent the JSON (single input)' }),
    record: Flags.boolean({
      summary: '--no-record: do not add the savings to the durable savings file',
      allowNo: true,
      default: true,
    }),
    ...configFlags('compress'),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Compress);
    // Loaded here, not at the top: `svc --help` and other commands stay fast.
    const { runCompressCommand } = await import('../src/cli/compress-command.js');
    const code = await runCompressCommand(flags, argv as string[]);
    if (code !== 0) this.exit(code);
  }
}

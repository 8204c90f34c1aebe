/**
 * The command table: what each command takes, says and returns. Help (`rivulet COMMAND --help`),
 * the overview (`rivulet help`) and the shell completion scripts are all written from it, so they
 * cannot disagree with each other.
 */
import { flowColumnsHelp } from './top-table.js';

export interface FlagHelp {
  readonly name: string;
  /** The value's placeholder; absent for a switch. */
  readonly value?: string;
  /** Values the flag takes, offered by completion. */
  readonly choices?: readonly string[];
  readonly help: string;
}

export interface CommandHelp {
  readonly name: string;
  readonly args: string;
  readonly summary: string;
  readonly flags: readonly FlagHelp[];
  readonly examples: readonly string[];
  readonly exitCodes: readonly string[];
  /** Paragraphs printed after the exit codes, for what a flag list cannot say. */
  readonly notes?: readonly string[];
}

const STAGES: FlagHelp = { name: 'stages', value: 'PATH', help: 'load a module of custom stages first (repeatable; .ts needs tsx)' };
const HELP: FlagHelp = { name: 'help', help: 'show this help' };

export const COMMANDS: readonly CommandHelp[] = [
  {
    name: 'run',
    args: 'CONFIG',
    summary: 'run the components of CONFIG until SIGINT/SIGTERM (reload: SIGHUP)',
    flags: [
      {
        name: 'server.http.listen-addr',
        value: 'HOST:PORT',
        help: 'where /metrics, /-/healthy, /-/ready and the API listen (default 127.0.0.1:12345)',
      },
      {
        name: 'server.http.allowed-hosts',
        value: 'NAME,...',
        help: 'Host names the server answers besides its listen address (and localhost on loopback); on 0.0.0.0 without it, any',
      },
      {
        name: 'workers',
        value: 'N',
        help: 'threads each logs.process spreads its stages over, split by stream (default: one per core; 1 runs them in place)',
      },
      STAGES,
      HELP,
    ],
    examples: [
      'rivulet run examples/default.alloy',
      'rivulet run pipeline.alloy --server.http.listen-addr 0.0.0.0:12345',
      'rivulet run pipeline.alloy --workers 1',
    ],
    exitCodes: ['0 after a clean stop', '1 usage error', '2 invalid config'],
  },
  {
    name: 'tap',
    args: 'ID',
    summary: 'print a sample of the entries passing through component ID of a running instance, as JSON lines',
    flags: [
      {
        name: 'server.http.listen-addr',
        value: 'HOST:PORT',
        help: 'where the instance serves its API (default 127.0.0.1:12345)',
      },
      { name: 'rate', value: 'N', help: 'most entries a second to print (default 100, at most 1000)' },
      {
        name: 'direction',
        value: 'in|out',
        choices: ['in', 'out'],
        help: 'what is sent to the component (in) or what it forwards (out); default out, in for a sink',
      },
      HELP,
    ],
    examples: [
      'rivulet tap logs.process.default',
      'rivulet tap logs.process.default --direction in',
      'rivulet tap logs.source.file.app --server.http.listen-addr 127.0.0.1:9000',
    ],
    exitCodes: [
      '0 the instance stopped, or SIGINT/SIGTERM',
      '1 usage error',
      '2 no such component, or a direction it does not have',
      '3 the instance does not answer',
    ],
  },
  {
    name: 'top',
    args: '',
    summary: "a live table of each component's entries in, out and dropped of a running instance",
    flags: [
      { name: 'url', value: 'URL', help: "the instance's run server (default http://127.0.0.1:12345)" },
      { name: 'interval', value: 'DURATION', help: 'how often to read its /metrics (default 1s)' },
      { name: 'once', help: 'print one table (rates over one interval) and exit; also when stdout is not a terminal' },
      HELP,
    ],
    examples: ['rivulet top', 'rivulet top --url http://127.0.0.1:9000 --interval 5s', 'rivulet top --once'],
    exitCodes: ['0 SIGINT/SIGTERM, or one table printed', '1 usage error', '3 the instance does not answer (--once)'],
    notes: flowColumnsHelp(),
  },
  {
    name: 'validate',
    args: 'CONFIG',
    summary: 'check CONFIG (a component graph, or a stage list as process reads it) without running it',
    flags: [{ name: 'quiet', help: 'no "ok: N components" line on a terminal' }, STAGES, HELP],
    examples: ['rivulet validate examples/default.alloy', 'rivulet validate stages.alloy --stages ./mask_email.js'],
    exitCodes: ['0 valid', '1 usage error', '2 invalid, with FILE:LINE:COL: message lines on stderr'],
  },
  {
    name: 'process',
    args: '--config FILE',
    summary: 'run standard input through a stage list and print every forwarded entry',
    flags: [
      { name: 'config', value: 'FILE', help: 'the stage list: bare stage.* blocks or one logs.process block' },
      {
        name: 'input',
        value: 'FORMAT',
        choices: ['jsonl', 'text'],
        help: 'jsonl (default): one entry object per line; text: each line is a log line',
      },
      {
        name: 'output',
        value: 'FORMAT',
        choices: ['json', 'entry', 'line'],
        help: 'json (default): the full entry; entry: without extracted values; line: the line only',
      },
      { name: 'inspect', help: 'show on stderr what every stage did to every entry' },
      { name: 'metrics', value: 'OUT', help: 'write the metrics in Prometheus text form to OUT at the end' },
      { name: 'now', value: 'TIME', help: 'start a virtual clock at TIME (RFC 3339) for deterministic replays' },
      { name: 'quiet', help: 'no summary at the end' },
      { name: 'workers', value: 'N', help: 'run the stages on N threads, split by stream; every stream keeps its order (default 1)' },
      STAGES,
      HELP,
    ],
    examples: [
      'rivulet process --config stages.alloy --input text < app.log',
      'rivulet process --config k8s.alloy --input text --output entry < cri.log',
      'rivulet process --config stages.alloy --inspect < entries.jsonl',
      'rivulet process --config k8s.alloy --workers 2 < entries.jsonl',
    ],
    exitCodes: ['0 done', '1 usage error, or every input line was malformed', '2 invalid config (nothing on stdout)'],
  },
  {
    name: 'test',
    args: 'FILE...',
    summary: 'run the config tests in each FILE: inputs through a stage list, outputs and metrics checked',
    flags: [STAGES, HELP],
    examples: ['rivulet test examples/config-tests/pipeline.test.alloy', 'rivulet test tests/*.test.alloy --stages ./mask_email.js'],
    exitCodes: [
      '0 every test passed',
      '1 a test failed (a diff under its FAIL line), or a usage error',
      '2 invalid test file or config, with FILE:LINE:COL: message lines on stderr (no test runs)',
    ],
  },
  {
    name: 'fmt',
    args: 'CONFIG',
    summary: 'print CONFIG in canonical form',
    flags: [{ name: 'write', help: 'rewrite the file instead of printing it' }, HELP],
    examples: ['rivulet fmt pipeline.alloy', 'rivulet fmt pipeline.alloy --write'],
    exitCodes: ['0 done', '1 usage error', '2 syntax error'],
  },
  {
    name: 'convert',
    args: '--from FORMAT FILE',
    summary: 'rewrite a reference agent config or a Promtail YAML config as a Rivulet config',
    flags: [
      {
        name: 'from',
        value: 'FORMAT',
        choices: ['alloy', 'promtail'],
        help: 'alloy: rename components and stages, keep the rest byte for byte; promtail: build the config from the YAML',
      },
      { name: 'output', value: 'FILE', help: 'write the config to FILE instead of standard output' },
      {
        name: 'keep-names',
        value: 'BOOL',
        choices: ['true', 'false'],
        help: "true (default): write out the source agent's default metric prefix so metric names stay; false: take Rivulet's",
      },
      HELP,
    ],
    examples: [
      'rivulet convert --from alloy config.alloy > rivulet.alloy',
      'rivulet convert --from promtail promtail.yaml --output rivulet.alloy',
      'rivulet convert --from alloy config.alloy --keep-names=false',
    ],
    exitCodes: [
      '0 converted (what could not be carried over: FILE:LINE:COL: warning: lines on stderr)',
      '1 usage error',
      '2 the input cannot be read or parsed, with FILE:LINE:COL: message lines on stderr',
    ],
  },
  {
    name: 'playground',
    args: '',
    summary: 'serve the pipeline playground on 127.0.0.1 (default port 8580)',
    flags: [
      { name: 'port', value: 'N', help: 'the port (0 picks a free one)' },
      { name: 'allow-host-access', help: "let runs read environment variables, files and DNS (off: a shared link's config could)" },
      STAGES,
      HELP,
    ],
    examples: ['rivulet playground', 'rivulet playground --port 0 --stages ./mask_email.js'],
    exitCodes: ['0 after SIGINT/SIGTERM', '1 usage error or port in use', '2 a stage module does not load'],
  },
  {
    name: 'completion',
    args: 'bash|zsh|fish',
    summary: 'print a shell completion script (e.g. rivulet completion bash > /etc/bash_completion.d/rivulet)',
    flags: [HELP],
    examples: ['source <(rivulet completion bash)', 'rivulet completion fish > ~/.config/fish/completions/rivulet.fish'],
    exitCodes: ['0 done', '1 unknown shell'],
  },
];

export function commandHelp(name: string): CommandHelp | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** `rivulet help`: every command in one line each. */
export function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => `${c.name} ${c.args}`.length)) + 2;
  const lines = COMMANDS.map((c) => `  ${`${c.name} ${c.args}`.trimEnd().padEnd(width)}${c.summary}`);
  return `usage: rivulet <command> [arguments]

commands:
${lines.join('\n')}
  ${'--version'.padEnd(width)}print the version

Run \`rivulet <command> --help\` for a command's flags, examples and exit codes.
A config can load custom stages itself: stages.import "NAME" { path = "./stages.js" }.
A path a command cannot read or write is one line and exit 2; an internal error (a bug) is one
line and exit 70, with its stack when RIVULET_DEBUG is set.
`;
}

/** `rivulet COMMAND --help`. */
export function usageOf(command: CommandHelp): string {
  const flagText = (f: FlagHelp) => `--${f.name}${f.value ? ` ${f.value}` : ''}`;
  const width = Math.max(...command.flags.map((f) => flagText(f).length)) + 2;
  return `usage: rivulet ${command.name}${command.args ? ` ${command.args}` : ''} [flags]

${command.summary}

flags:
${command.flags.map((f) => `  ${flagText(f).padEnd(width)}${f.help}`).join('\n')}

examples:
${command.examples.map((e) => `  ${e}`).join('\n')}

exit codes:
${command.exitCodes.map((e) => `  ${e}`).join('\n')}
${command.notes ? `\n${command.notes.join('\n')}\n` : ''}`;
}

/** A completion script for `shell`, or undefined for a shell we do not write one for. */
export function completionScript(shell: string): string | undefined {
  const names = COMMANDS.map((c) => c.name).join(' ');
  if (shell === 'bash') {
    const cases = COMMANDS.map((c) => {
      const flags = c.flags.map((f) => `--${f.name}`).join(' ');
      const choices = c.flags
        .filter((f) => f.choices)
        .map((f) => `      --${f.name}) COMPREPLY=($(compgen -W "${f.choices!.join(' ')}" -- "$cur")); return ;;`)
        .join('\n');
      return `    ${c.name})\n      case "$prev" in\n${choices}${choices ? '\n' : ''}      esac\n      COMPREPLY=($(compgen -W "${flags}" -- "$cur"))\n      [ \${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))\n      ;;`;
    }).join('\n');
    return `# bash completion for rivulet
_rivulet() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${names} --version --help" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
}
complete -o default -F _rivulet rivulet
`;
  }
  if (shell === 'zsh') {
    const cases = COMMANDS.map((c) => {
      const specs = c.flags
        .map(
          (f) =>
            `'--${f.name}${f.value ? '=' : ''}[${f.help.replaceAll("'", '').replaceAll(']', ')').replaceAll('[', '(')}]${f.choices ? `:value:(${f.choices.join(' ')})` : f.value ? ':value:_files' : ''}'`,
        )
        .join(' ');
      return `    ${c.name}) _arguments ${specs} '*:file:_files' ;;`;
    }).join('\n');
    return `#compdef rivulet
# zsh completion for rivulet
_rivulet() {
  if (( CURRENT == 2 )); then
    compadd ${names} --version --help
    return
  fi
  case "\${words[2]}" in
${cases}
  esac
}
compdef _rivulet rivulet
`;
  }
  if (shell === 'fish') {
    const lines = [`complete -c rivulet -n '__fish_use_subcommand' -a '${names}'`];
    for (const c of COMMANDS) {
      lines.push(`complete -c rivulet -n '__fish_use_subcommand' -a ${c.name} -d '${c.summary.replaceAll("'", '')}'`);
      for (const f of c.flags) {
        const values = f.choices ? ` -x -a '${f.choices.join(' ')}'` : f.value ? ' -r' : '';
        lines.push(
          `complete -c rivulet -n '__fish_seen_subcommand_from ${c.name}' -l ${f.name}${values} -d '${f.help.replaceAll("'", '')}'`,
        );
      }
    }
    return `# fish completion for rivulet\n${lines.join('\n')}\n`;
  }
  return undefined;
}

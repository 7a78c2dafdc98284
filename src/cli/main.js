import { TargetError, UsageError } from '../errors.js'
import { VERSION } from '../version.js'
import { formatHelp, parseCommand } from './args.js'

/**
 * What a command may touch of the outside world; tests and the bin pass real streams.
 * @typedef {object} Io
 * @property {NodeJS.WriteStream} stdout
 * @property {NodeJS.WriteStream} stderr
 * @property {(stop: (signal: NodeJS.Signals) => unknown) => void} stopOnSignal run `stop` on the first Ctrl-C / SIGTERM,
 *   with the signal's name
 */

/**
 * @typedef {object} Command
 * @property {import('./args.js').CommandSpec} spec
 * @property {(args: ReturnType<typeof parseCommand>, io: Io) => Promise<number>} run
 */

/**
 * Each command is imported only when it runs: loading all of them (the doctor's analysis, the HTML report, the
 * profile model) took ~40 ms of CPU on every start, which `hotpath load` charged to its CPU per request.
 * @type {Record<string, () => Promise<Command>>}
 */
const COMMANDS = {
  doctor: () => import('./doctor.js'),
  load: () => import('./load.js'),
  merge: () => import('./merge.js'),
  compare: () => import('./compare.js'),
  flame: () => import('./flame.js'),
  heap: () => import('./heap.js'),
  kube: () => import('./kube.js')
}

const USAGE = `hotpath ${VERSION} — load, diagnose and profile Node.js servers

Usage: hotpath <command> [options]

Commands:
  doctor    start a server with the probe, load it, and say what is wrong and which line to blame
  load      load an HTTP server and measure it (or start it: hotpath load -- node server.js)
  merge     merge load results from several machines into one, exactly
  compare   compare two load results or doctor runs side by side, with what is beyond noise
  flame     flame graph, pprof and culprits of a profile (hotpath flame --from file.cpuprofile)
  heap      load a server in phases with heap snapshots and say what keeps the objects that grow
  kube      print the Kubernetes Job that runs a load from N pods at once (then: kubectl logs … | hotpath merge -)

Run 'hotpath <command> --help' for a command's options.
`

/**
 * Runs the CLI. Never throws: errors a user can fix print one line; anything else prints a short internal-error note
 * (the stack only with HOTPATH_DEBUG=1).
 * @param {string[]} argv
 * @param {Io} io
 * @returns {Promise<number>} the exit code
 */
export async function main (argv, io) {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE)
    return name === undefined ? 2 : 0
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`)
    return 0
  }
  const importCommand = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (importCommand === undefined) {
    io.stderr.write(`hotpath: unknown command '${name}' (commands: ${Object.keys(COMMANDS).join(', ')})\n`)
    return 2
  }
  try {
    const command = await importCommand()
    const args = parseCommand(command.spec, rest)
    if (args.help) {
      io.stdout.write(formatHelp(command.spec))
      return 0
    }
    return await command.run(args, io)
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`hotpath ${name}: ${err.message}\n`)
      return err.exitCode
    }
    if (err instanceof TargetError) {
      io.stderr.write(`hotpath ${name}: ${err.message}\n`)
      for (const line of err.stderr) io.stderr.write(`  | ${line}\n`)
      return err.exitCode
    }
    const e = /** @type {Error} */ (err)
    io.stderr.write(`hotpath ${name}: internal error: ${e?.message ?? e} (HOTPATH_DEBUG=1 shows the stack; please report it)\n`)
    if (process.env.HOTPATH_DEBUG) io.stderr.write(`${e?.stack}\n`)
    return 70
  }
}

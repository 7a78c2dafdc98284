import { readFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { preparePlan } from '../load/load.js'
import { FILES_DIR, manifests, podCommand } from '../kube/manifest.js'
import { toYaml } from '../kube/yaml.js'
import { diagnoseScript } from '../kube/pod-diagnosis.js'
import { VERSION } from '../version.js'
import { durationFlag, numberFlag } from './args.js'
import { LOAD_FLAGS, loadOptionsFromFlags } from './load-options.js'

const { 'socket-path': _socketPath, ...FLAGS } = LOAD_FLAGS

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'kube',
  usage: 'hotpath kube [load options] --parallel N [--image I] [--namespace NS] <url>\n' +
    '       hotpath kube [load options] --parallel N -- <url>\n' +
    '       hotpath kube --diagnose <pod> [--observe 60s] [--container C] [--pid 1] [--volume name:/path]',
  summary: 'Print the Kubernetes manifest that runs this load from N pods: an Indexed Job whose pods each run one\n' +
    'segment (hotpath load --segment auto/N), all starting at one instant a short margin ahead, each printing its result\n' +
    'as JSON between marker lines in its log. Apply it, wait for it, and merge the logs:\n' +
    '  hotpath kube -c 400 -R 40000 -d 60 --parallel 4 http://my-service:3000/ | kubectl apply -f -\n' +
    '  kubectl wait --for=condition=complete job/<name> --timeout=<deadline>s\n' +
    '  kubectl logs -l job-name=<name> --tail=-1 | hotpath merge -',
  options: {
    ...FLAGS,
    title: { type: 'string', value: 'text', description: 'a title stored in the result' },
    parallel: { type: 'string', value: 'N', description: 'pods, each running 1/N of the load (required)' },
    image: { type: 'string', value: 'image', description: 'container image with node and npx', default: 'node:22-slim' },
    package: { type: 'string', value: 'spec', description: 'what npx runs in the pods', default: `hotpath@${VERSION}` },
    namespace: { type: 'string', value: 'ns', description: 'namespace of the Job (default: kubectl\'s)' },
    name: { type: 'string', value: 'name', description: 'name of the Job (default: hotpath-<run id>)' },
    'start-in': { type: 'string', value: 'time', description: 'how far ahead the pods start together: time to apply, schedule, pull and install', default: '60s' },
    cpu: { type: 'string', value: 'cpu', description: 'CPU each pod requests and is limited to (default: one per --workers)' },
    memory: { type: 'string', value: 'size', description: 'memory each pod requests and is limited to (default: 512Mi, +256Mi per extra worker)' },
    diagnose: { type: 'string', value: 'pod', description: 'instead of a load: print the commands that diagnose this pod under its real traffic (doctor --attach --observe, docs/kubernetes.md)' },
    observe: { type: 'string', value: 'time', description: 'with --diagnose: how long to watch the traffic', default: '60s' },
    container: { type: 'string', value: 'name', description: 'with --diagnose: the app\'s container (default: kubectl\'s, the pod\'s first)' },
    pid: { type: 'string', value: 'N', description: 'with --diagnose: the server\'s pid in its container', default: '1' },
    volume: { type: 'string', value: 'name:/path', description: 'with --diagnose: a volume the app\'s container mounts at /path: print the ephemeral-container form (kubectl debug), which mounts it too' }
  },
  details: 'The Job: completionMode Indexed, completions = parallelism = N, backoffLimit 0 (a segment run again would\n' +
    'start out of step), activeDeadlineSeconds bounding the whole run, pods spread over nodes (preferred anti-affinity),\n' +
    'requests = limits (Guaranteed QoS). --requests and --body-file travel in a ConfigMap beside it. The pods run the\n' +
    'official node image and npx hotpath at this version (--package hotpath@<version> pins another; --package also takes\n' +
    'a tarball URL or a git spec, for a hotpath not on the npm registry). The nodes\' clocks\n' +
    'must be in sync (NTP): merge calls segments that began more than 1 s apart out of step.\n' +
    'With --diagnose <pod>, no load: the commands that attach doctor to the pod\'s server and watch its real traffic\n' +
    '(kubectl exec into its container; with --volume, kubectl debug from an ephemeral container that mounts it too),\n' +
    'copy the run out (kubectl cp) and read it here (hotpath doctor --analyse).'
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>}
 */
export async function run ({ values, positionals, command }, io) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  if (str('diagnose') !== undefined) return diagnose(values, [...positionals, ...command], io)
  for (const k of DIAGNOSE_ONLY) if (values[k] !== undefined) throw new UsageError(`--${k} goes with --diagnose <pod>`)
  const urls = [...positionals, ...command]
  if (urls.length !== 1) throw new UsageError(`kube needs one URL, the load's target as the pods reach it, got ${urls.length === 0 ? 'none' : urls.join(' ')}`)
  const url = urls[0]
  const parallel = numberFlag('parallel', str('parallel'), { integer: true })
  if (parallel === undefined) throw new UsageError('kube needs --parallel N: how many pods share the load')
  if (parallel > 1000) throw new UsageError(`--parallel ${parallel} is more pods than one load needs (at most 1000)`)
  const options = await loadOptionsFromFlags(values)
  const startIn = /** @type {number} */ (durationFlag('start-in', str('start-in') ?? '60s'))
  // A whole second: the instant is written into every pod's command line.
  const startAt = Math.ceil((Date.now() + startIn * 1000) / 1000) * 1000
  // Checked here as the pods will check it, so a load they cannot run is refused before anything is applied.
  const { segment, plan } = preparePlan({ ...options, url, segment: { index: 1, count: parallel }, startAt })
  const run = /** @type {{ run: string }} */ (segment).run
  const name = str('name') ?? `hotpath-${run}`
  dnsLabel('--name', name)
  if (str('namespace') !== undefined) dnsLabel('--namespace', /** @type {string} */ (str('namespace')))
  const workers = options.workers ?? 1
  const resources = {
    cpu: quantity('--cpu', str('cpu') ?? String(workers), /^\d+(\.\d+)?m?$/),
    memory: quantity('--memory', str('memory') ?? `${512 + 256 * (workers - 1)}Mi`, /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/)
  }
  const { files, paths } = await podFiles(values)
  const running = Number.isFinite(plan.duration) ? plan.duration : 3600
  /** @type {import('../kube/manifest.js').KubeRun} */
  const k = {
    name,
    namespace: str('namespace'),
    run,
    parallel,
    image: str('image') ?? 'node:22-slim',
    pkg: str('package') ?? `hotpath@${VERSION}`,
    startAt,
    loadArgs: [...forwardedFlags(values, paths), url],
    files,
    resources,
    deadline: Math.ceil(startIn + plan.warmup + running + plan.timeout + 120)
  }
  const ns = k.namespace ? ` -n ${k.namespace}` : ''
  const collect = `kubectl logs${ns} -l job-name=${name} --tail=-1 | hotpath merge -`
  const wait = `kubectl wait${ns} --for=condition=complete job/${name} --timeout=${k.deadline}s`
  const header = [
    `# hotpath kube: run ${run}, ${parallel} pods, each 1/${parallel} of the load; they start together at ${new Date(startAt).toISOString()}`,
    `# each pod runs: ${podCommand(k).join(' ')}`,
    `# apply within ${startIn} s:  kubectl apply -f <this file>   (or pipe: hotpath kube … | kubectl apply -f -)`,
    `# wait:     ${wait}`,
    `# collect:  ${collect}`
  ]
  io.stdout.write(header.map(l => `${l}\n`).join('') + manifests(k).map(toYaml).join('---\n'))
  io.stderr.write(`hotpath kube: run ${run}: ${parallel} pods start together at ${new Date(startAt).toISOString()} (in ${startIn} s) — apply it now, then:\n  ${wait}\n  ${collect}\n`)
  return 0
}

/** The flags of --diagnose alone. */
const DIAGNOSE_ONLY = ['observe', 'container', 'pid', 'volume']

/**
 * `--diagnose <pod>`: the commands that diagnose one pod under its real traffic, printed as a shell script.
 * @param {Record<string, unknown>} values
 * @param {string[]} rest
 * @param {import('./main.js').Io} io
 */
function diagnose (values, rest, io) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  if (rest.length > 0) throw new UsageError(`--diagnose takes a pod, not a URL: '${rest[0]}' is not for it`)
  const load = Object.keys(FLAGS).concat(['parallel', 'start-in', 'cpu', 'memory', 'name', 'title']).find(k => values[k] !== undefined)
  if (load !== undefined) throw new UsageError(`--diagnose sends no load: --${load} has nothing to set`)
  const pod = /** @type {string} */ (str('diagnose'))
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(pod) || pod.length > 253) throw new UsageError(`--diagnose needs a pod's name, got '${pod}'`)
  if (str('namespace') !== undefined) dnsLabel('--namespace', /** @type {string} */ (str('namespace')))
  if (str('container') !== undefined) dnsLabel('--container', /** @type {string} */ (str('container')))
  const seconds = /** @type {number} */ (durationFlag('observe', str('observe') ?? '60s'))
  const pid = /** @type {number} */ (numberFlag('pid', str('pid') ?? '1', { integer: true }))
  /** @type {{ name: string, path: string } | null} */
  let volume = null
  if (str('volume') !== undefined) {
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?):(\/.*)$/.exec(/** @type {string} */ (str('volume')))
    if (m === null) throw new UsageError(`--volume must be <volume name>:<path where the app's container mounts it>, got '${str('volume')}'`)
    volume = { name: m[1], path: m[3] }
  }
  io.stdout.write(diagnoseScript({
    pod,
    namespace: str('namespace'),
    container: str('container'),
    pid,
    seconds,
    pkg: str('package') ?? `hotpath@${VERSION}`,
    image: str('image') ?? 'node:22-slim',
    volume
  }))
  return 0
}

/**
 * The load flags given, as each pod passes them on; files point at the ConfigMap's mount.
 * @param {Record<string, unknown>} values
 * @param {Record<string, string>} paths flag → path inside the pod
 * @returns {string[]}
 */
function forwardedFlags (values, paths) {
  /** @type {string[]} */
  const args = []
  for (const name of [...Object.keys(FLAGS), 'title']) {
    const v = values[name]
    if (v === undefined || v === false) continue
    if (v === true) args.push(`--${name}`)
    else for (const one of Array.isArray(v) ? v : [v]) args.push(`--${name}`, paths[name] ?? String(one))
  }
  return args
}

/** ConfigMaps hold at most 1 MiB. */
const CONFIGMAP_MAX = 1024 * 1024 - 4096

/**
 * The files the load reads, carried to the pods in a ConfigMap.
 * @param {Record<string, unknown>} values
 */
async function podFiles (values) {
  /** @type {Record<string, { text?: string, base64?: string }>} */
  const files = {}
  /** @type {Record<string, string>} */
  const paths = {}
  let size = 0
  for (const [flag, key, binary] of /** @type {const} */ ([['requests', 'requests.json', false], ['body-file', 'body', true]])) {
    const file = /** @type {string | undefined} */ (values[flag])
    if (file === undefined) continue
    const bytes = await readFile(file) // read before, by loadOptionsFromFlags: a bad file was refused there
    size += binary ? Math.ceil(bytes.length / 3) * 4 : bytes.length
    files[key] = binary ? { base64: bytes.toString('base64') } : { text: bytes.toString('utf8') }
    paths[flag] = `${FILES_DIR}/${key}`
  }
  if (size > CONFIGMAP_MAX) throw new UsageError(`--requests and --body-file come to ${size} bytes in the ConfigMap that carries them to the pods, more than its 1 MiB`)
  return { files, paths }
}

/**
 * @param {string} flag
 * @param {string} value
 */
function dnsLabel (flag, value) {
  if (value.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value)) {
    throw new UsageError(`${flag} must be a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit), got '${value}'`)
  }
}

/**
 * @param {string} flag
 * @param {string} value
 * @param {RegExp} form
 */
function quantity (flag, value, form) {
  if (!form.test(value) || Number.parseFloat(value) <= 0) throw new UsageError(`${flag} must be a Kubernetes quantity like ${flag === '--cpu' ? '2 or 1500m' : '512Mi or 2Gi'}, got '${value}'`)
  return value
}

// `hotpath kube --diagnose <pod>`: the commands that diagnose one pod of a Deployment under its real traffic — doctor
// attached to the server's process (`--attach <pid> --observe <time>`: no load sent), its run directory copied out of
// the pod and read anywhere with `doctor --analyse`. Two forms: in the app's own container (`kubectl exec`: its image
// has node, and the probe's files and channel are in the filesystem the server sees), or from an ephemeral container
// (`kubectl debug --target`) that mounts a volume the app's container mounts too — the server must load the probe from
// files it can see, and reach its channel there.

/**
 * @typedef {object} DiagnoseRun
 * @property {string} pod
 * @property {string} [namespace]
 * @property {string} [container] the app's container (kubectl's default: the pod's first)
 * @property {number} pid the server's pid in its container (1 when node is the container's command)
 * @property {number} seconds observed
 * @property {string} pkg what npx runs: `hotpath@0.1.0`
 * @property {string} image the ephemeral container's image (node and npx)
 * @property {{ name: string, path: string } | null} volume a volume of the pod the app's container mounts at `path`:
 *   the ephemeral form
 */

/**
 * The doctor command run inside the pod, and where its run is saved there.
 * @param {DiagnoseRun} d
 * @param {string} dir where the run directory goes in the pod
 */
export function doctorCommand (d, dir) {
  // No heap snapshots in production: each holds the server's event loop for seconds; the verdict, culprits and the
  // heap samples stand without them.
  return ['npx', '--yes', d.pkg, 'doctor', '--attach', String(d.pid), '--observe', `${d.seconds}s`, '--no-retainers', '--no-progress', '--save', dir]
}

/**
 * The ephemeral container's partial spec (`kubectl debug --custom`): the shared volume, and the temporary files, npm's
 * cache (hotpath's files) and the run all put on it.
 * @param {DiagnoseRun & { volume: { name: string, path: string } }} d
 * @returns {import('kubernetes-models/v1/EphemeralContainer').IEphemeralContainer}
 */
export function ephemeralSpec (d) {
  const base = d.volume.path.replace(/\/+$/, '')
  return {
    name: 'hotpath',
    volumeMounts: [{ name: d.volume.name, mountPath: d.volume.path }],
    env: [
      { name: 'TMPDIR', value: base },
      { name: 'npm_config_cache', value: `${base}/.hotpath-npm` },
      { name: 'NPM_CONFIG_UPDATE_NOTIFIER', value: 'false' },
      { name: 'NPM_CONFIG_FUND', value: 'false' }
    ]
  }
}

/**
 * The lines to run, as a shell script with comments.
 * @param {DiagnoseRun} d
 * @returns {string}
 */
export function diagnoseScript (d) {
  const ns = d.namespace ? ` -n ${d.namespace}` : ''
  const c = d.container ? ` -c ${d.container}` : ''
  const lines = [`# hotpath kube: diagnose pod ${d.pod} under its real traffic for ${d.seconds} s (no load sent), then read the run here`]
  if (d.volume === null) {
    const dir = '/tmp/hotpath-run'
    lines.push(
      '# in the app\'s own container: its image has node and npx, and it must reach the npm registry (or set --package)',
      `kubectl exec${ns} ${d.pod}${c} -- ${doctorCommand(d, dir).join(' ')}`,
      `kubectl cp${ns}${c} ${d.pod}:${dir} ./hotpath-run`,
      'npx hotpath doctor --analyse ./hotpath-run'
    )
  } else {
    const base = d.volume.path.replace(/\/+$/, '')
    const dir = `${base}/hotpath-run`
    const spec = ephemeralSpec(/** @type {DiagnoseRun & { volume: { name: string, path: string } }} */ (d))
    lines.push(
      `# from an ephemeral container (kubectl 1.31+): it shares the server's processes (--target) and the volume ${d.volume.name} at ${d.volume.path},`,
      '# where the probe\'s files, its channel and the run go: the server loads the probe from files it sees',
      `cat > hotpath-debug.json <<'EOF'\n${JSON.stringify(spec, null, 2)}\nEOF`,
      `kubectl debug${ns} ${d.pod} -i --target=${d.container ?? '<app container>'} --profile=general --image=${d.image} --custom=hotpath-debug.json -- ${doctorCommand(d, dir).join(' ')}`,
      `kubectl cp${ns}${c} ${d.pod}:${dir} ./hotpath-run`,
      'npx hotpath doctor --analyse ./hotpath-run'
    )
  }
  return lines.map(l => `${l}\n`).join('')
}

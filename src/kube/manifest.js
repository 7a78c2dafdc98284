// The Kubernetes objects that run one load as N segments: an Indexed Job whose pods each run `hotpath load --segment
// auto/N` (Kubernetes gives each its JOB_COMPLETION_INDEX), all waiting for one start instant, and a ConfigMap for the
// files the load reads (--requests, --body-file), which the pods would not otherwise have.

/** Where the pods find the files of the ConfigMap. */
export const FILES_DIR = '/etc/hotpath'

/**
 * @typedef {object} KubeRun
 * @property {string} name the Job's name (and the ConfigMap's)
 * @property {string} [namespace]
 * @property {string} run the run id the segments share
 * @property {number} parallel N: pods, segments
 * @property {string} image a container image with node and npx (an official node image)
 * @property {string} pkg what npx runs: `hotpath@0.1.0`
 * @property {number} startAt epoch ms
 * @property {string[]} loadArgs the load's own flags and its URL, as each pod passes them
 * @property {Record<string, { text?: string, base64?: string }>} files ConfigMap entries, mounted in FILES_DIR
 * @property {{ cpu: string, memory: string }} resources each pod's, requested and its limit (Guaranteed QoS: a
 *   generator that is throttled or evicted mid-run measures itself)
 * @property {number} deadline seconds the Job may run, waiting and installing included
 */

/**
 * The command each pod runs.
 * @param {KubeRun} k
 * @returns {string[]}
 */
export function podCommand (k) {
  return [
    'npx', '--yes', k.pkg, 'load',
    '--segment', `auto/${k.parallel}`,
    '--start-at', new Date(k.startAt).toISOString(),
    '--run-id', k.run,
    '--markers', '--no-progress',
    ...k.loadArgs
  ]
}

/**
 * @param {KubeRun} k
 * @returns {object[]} the objects to apply, in order (the ConfigMap, when there are files, before the Job)
 */
export function manifests (k) {
  const labels = { 'app.kubernetes.io/name': 'hotpath', 'app.kubernetes.io/component': 'load', 'hotpath/run': k.run }
  const metadata = { name: k.name, ...(k.namespace ? { namespace: k.namespace } : {}), labels }
  const hasFiles = Object.keys(k.files).length > 0
  /** @type {Record<string, string>} */
  const data = {}
  /** @type {Record<string, string>} */
  const binaryData = {}
  for (const [file, content] of Object.entries(k.files)) {
    if (content.text !== undefined) data[file] = content.text
    else if (content.base64 !== undefined) binaryData[file] = content.base64
  }
  // Typed by kubernetes-models (a dev dependency: types only, nothing imported at run time), so that tsc refuses a
  // field the Kubernetes API does not have; the tests validate the printed YAML against its schema as well.
  /** @type {import('kubernetes-models/v1/ConfigMap').IConfigMap} */
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata,
    ...(Object.keys(data).length > 0 ? { data } : {}),
    ...(Object.keys(binaryData).length > 0 ? { binaryData } : {})
  }
  /** @type {import('kubernetes-models/batch/v1/Job').IJob} */
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata,
    spec: {
      completionMode: 'Indexed',
      completions: k.parallel,
      parallelism: k.parallel,
      // A segment run again would start after the others, out of step: a failed pod stays failed, and merge names it.
      backoffLimit: 0,
      activeDeadlineSeconds: k.deadline,
      // Logs go with the pods: an hour to collect them.
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          affinity: {
            // Spread over nodes, so that N generators do not share one node's CPU and network; preferred, so that a
            // cluster with fewer nodes than pods still runs them all.
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{
                weight: 100,
                podAffinityTerm: { labelSelector: { matchLabels: { 'hotpath/run': k.run } }, topologyKey: 'kubernetes.io/hostname' }
              }]
            }
          },
          containers: [{
            name: 'hotpath',
            image: k.image,
            command: podCommand(k),
            env: [
              { name: 'NPM_CONFIG_UPDATE_NOTIFIER', value: 'false' },
              { name: 'NPM_CONFIG_FUND', value: 'false' }
            ],
            resources: { requests: { ...k.resources }, limits: { ...k.resources } },
            ...(hasFiles ? { volumeMounts: [{ name: 'hotpath-files', mountPath: FILES_DIR, readOnly: true }] } : {})
          }],
          ...(hasFiles ? { volumes: [{ name: 'hotpath-files', configMap: { name: k.name } }] } : {})
        }
      }
    }
  }
  return hasFiles ? [configMap, job] : [job]
}

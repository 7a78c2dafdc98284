// hotpath kube: the manifest it prints is what the Kubernetes API accepts (checked by kubernetes-models' validation
// of the API's OpenAPI schema), and runs the load as N segments that start together.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { EphemeralContainer } from 'kubernetes-models/v1/EphemeralContainer'
import { hotpath } from './helpers/cli.js'

/**
 * The objects of a printed manifest, each validated against the Kubernetes API schema (validate() throws).
 * @param {string} yaml
 * @returns {any[]}
 */
function validObjects (yaml) {
  const docs = parseAllDocuments(yaml)
  for (const d of docs) assert.deepEqual(d.errors, [], 'the YAML parses')
  return docs.map(d => {
    const o = d.toJS()
    if (o.kind === 'Job') new Job(o).validate()
    else if (o.kind === 'ConfigMap') new ConfigMap(o).validate()
    else assert.fail(`unexpected kind ${o.kind}`)
    return o
  })
}

test('kube prints an Indexed Job of N pods that the API schema accepts, each running one segment', async () => {
  const before = Date.now()
  const out = await hotpath(['kube', '-c', '400', '-R', '40000', '-d', '60', '-w', '2', '--parallel', '4', '--namespace', 'perf', '--start-in', '90s', '--', 'http://api.perf.svc:3000/items'])
  assert.equal(out.code, 0, out.stderr)
  const objects = validObjects(out.stdout)
  assert.equal(objects.length, 1)
  const job = objects[0]
  assert.equal(job.apiVersion, 'batch/v1')
  assert.equal(job.metadata.namespace, 'perf')
  assert.match(job.metadata.name, /^hotpath-[0-9a-f]{12}$/)
  assert.equal(job.spec.completionMode, 'Indexed')
  assert.equal(job.spec.completions, 4)
  assert.equal(job.spec.parallelism, 4)
  assert.equal(job.spec.backoffLimit, 0)
  assert.ok(job.spec.activeDeadlineSeconds >= 90 + 60 && job.spec.activeDeadlineSeconds <= 90 + 60 + 300, `deadline ${job.spec.activeDeadlineSeconds}`)
  const pod = job.spec.template.spec
  assert.equal(pod.restartPolicy, 'Never')
  const spread = pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm
  assert.equal(spread.topologyKey, 'kubernetes.io/hostname')
  assert.deepEqual(spread.labelSelector.matchLabels, { 'hotpath/run': job.metadata.labels['hotpath/run'] })
  assert.deepEqual(job.spec.template.metadata.labels, job.metadata.labels)
  const [container] = pod.containers
  assert.equal(container.image, 'node:22-slim')
  assert.deepEqual(container.resources.requests, { cpu: '2', memory: '768Mi' })
  assert.deepEqual(container.resources.limits, container.resources.requests)

  const cmd = container.command
  const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
  assert.deepEqual(cmd.slice(0, 4), ['npx', '--yes', `hotpath@${version}`, 'load'], 'npx runs this version, pinned')
  const flag = (/** @type {string} */ name) => cmd[cmd.indexOf(name) + 1]
  assert.equal(flag('--segment'), 'auto/4')
  assert.equal(flag('--run-id'), job.metadata.labels['hotpath/run'])
  assert.ok(cmd.includes('--markers'))
  const startAt = Date.parse(flag('--start-at'))
  assert.ok(startAt >= before + 90_000 && startAt <= Date.now() + 91_000, 'the pods start together, --start-in ahead')
  assert.deepEqual([flag('--connections'), flag('--rate'), flag('--duration'), flag('--workers')], ['400', '40000', '60', '2'])
  assert.equal(cmd.at(-1), 'http://api.perf.svc:3000/items')

  assert.match(out.stderr, new RegExp(`kubectl logs -n perf -l job-name=${job.metadata.name} --tail=-1 \\| hotpath merge -`))
  assert.match(out.stdout, /^# hotpath kube: run \w+, 4 pods/)
})

test('kube carries --requests and --body-file to the pods in a ConfigMap', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-kube-'))
  try {
    const requests = join(dir, 'requests.ndjson')
    await writeFile(requests, '{"path":"/a"}\n{"path":"/b","method":"POST"}\n')
    const body = join(dir, 'body.bin')
    await writeFile(body, Buffer.from([0, 255, 1, 254]))
    const out = await hotpath(['kube', '-c', '8', '--parallel', '2', '--requests', requests, '--body-file', body, '-H', 'X-A: 1', '-H', 'X-B: 2', 'http://svc/'])
    assert.equal(out.code, 0, out.stderr)
    const [configMap, job] = validObjects(out.stdout)
    assert.equal(configMap.kind, 'ConfigMap')
    assert.equal(configMap.data['requests.json'], await readFile(requests, 'utf8'))
    assert.deepEqual(Buffer.from(configMap.binaryData.body, 'base64'), await readFile(body))
    const pod = job.spec.template.spec
    assert.equal(pod.volumes[0].configMap.name, configMap.metadata.name)
    assert.equal(pod.containers[0].volumeMounts[0].mountPath, '/etc/hotpath')
    const cmd = pod.containers[0].command
    assert.equal(cmd[cmd.indexOf('--requests') + 1], '/etc/hotpath/requests.json')
    assert.equal(cmd[cmd.indexOf('--body-file') + 1], '/etc/hotpath/body')
    assert.deepEqual(cmd.filter((/** @type {string} */ a, /** @type {number} */ i) => cmd[i - 1] === '--header'), ['X-A: 1', 'X-B: 2'])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('kube refuses, in one line and exit 2, what the pods could not run', async () => {
  const cases = [
    [['-c', '8', 'http://svc/'], /needs --parallel N/],
    [['-c', '2', '--parallel', '4', 'http://svc/'], /split in 4 segments needs --connections of at least 4/],
    [['--parallel', '2', '--name', 'Not_A_Name', 'http://svc/'], /--name must be a DNS label/],
    [['--parallel', '2', '--socket-path', '/tmp/s', 'http://svc/'], /unknown option '--socket-path'/],
    [['--parallel', '2', '--memory', 'lots', 'http://svc/'], /--memory must be a Kubernetes quantity/],
    [['--parallel', '2'], /kube needs one URL/]
  ]
  for (const [args, message] of /** @type {[string[], RegExp][]} */ (cases)) {
    const out = await hotpath(['kube', ...args])
    assert.equal(out.code, 2, args.join(' '))
    assert.equal(out.stdout, '')
    assert.match(out.stderr, message)
    assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr)
  }
})

test('kube --help says how to apply, wait and collect', async () => {
  const out = await hotpath(['kube', '--help'])
  assert.equal(out.code, 0)
  assert.match(out.stdout, /kubectl logs -l job-name=<name> --tail=-1 \| hotpath merge -/)
  assert.match(out.stdout, /--parallel <N>/)
})

test('kube --diagnose prints the commands that diagnose one pod under its real traffic: exec, copy out, analyse', async () => {
  const out = await hotpath(['kube', '--diagnose', 'api-7d9f8c6b5-x2k4q', '--namespace', 'shop', '--container', 'api', '--observe', '90s'])
  assert.equal(out.code, 0, out.stderr)
  const lines = out.stdout.split('\n').filter(l => l !== '' && !l.startsWith('#'))
  assert.match(lines[0], /^kubectl exec -n shop api-7d9f8c6b5-x2k4q -c api -- npx --yes hotpath@\S+ doctor --attach 1 --observe 90s --no-retainers --no-progress --save \/tmp\/hotpath-run$/)
  assert.equal(lines[1], 'kubectl cp -n shop -c api api-7d9f8c6b5-x2k4q:/tmp/hotpath-run ./hotpath-run')
  assert.equal(lines[2], 'npx hotpath doctor --analyse ./hotpath-run')
  // What runs in the pod is a doctor command line hotpath accepts.
  const inPod = lines[0].split(' -- ')[1].split(' ').slice(3)
  const help = await hotpath([...inPod.filter(w => w !== '--no-progress').slice(0, 1), '--help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /--observe/)
})

test('kube --diagnose --volume prints the ephemeral container\'s spec, which the API schema accepts, sharing the volume', async () => {
  const out = await hotpath(['kube', '--diagnose', 'api-0', '--container', 'api', '--volume', 'tmp:/tmp', '--pid', '7'])
  assert.equal(out.code, 0, out.stderr)
  const json = /cat > hotpath-debug\.json <<'EOF'\n([\s\S]*?)\nEOF/.exec(out.stdout)
  assert.ok(json, out.stdout)
  const spec = JSON.parse(json[1])
  new EphemeralContainer({ image: 'node:22-slim', ...spec }).validate()
  assert.deepEqual(spec.volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }])
  assert.deepEqual(spec.env.find((/** @type {any} */ e) => e.name === 'TMPDIR'), { name: 'TMPDIR', value: '/tmp' })
  assert.match(out.stdout, /\nkubectl debug api-0 -i --target=api --profile=general --image=node:22-slim --custom=hotpath-debug\.json -- npx --yes hotpath@\S+ doctor --attach 7 --observe 60s --no-retainers --no-progress --save \/tmp\/hotpath-run\n/)
  assert.match(out.stdout, /\nkubectl cp -c api api-0:\/tmp\/hotpath-run \.\/hotpath-run\n/)
})

test('kube --diagnose refuses a load\'s flags, a URL and a bad volume in one line; --observe without it too', async () => {
  for (const [args, message] of /** @type {const} */ ([
    [['--diagnose', 'api-0', '-c', '10'], /--diagnose sends no load: --connections/],
    [['--diagnose', 'api-0', '--parallel', '2'], /--diagnose sends no load: --parallel/],
    [['--diagnose', 'api-0', 'http://svc/'], /--diagnose takes a pod, not a URL/],
    [['--diagnose', 'api-0', '--volume', 'tmp'], /--volume must be <volume name>:<path/],
    [['--diagnose', 'Api_0'], /--diagnose needs a pod's name/],
    [['--observe', '60s', '--parallel', '2', 'http://svc/'], /--observe goes with --diagnose <pod>/]
  ])) {
    const out = await hotpath(['kube', ...args])
    assert.equal(out.code, 2, `${args.join(' ')}: ${out.stderr}`)
    assert.match(out.stderr, message)
    assert.equal(out.stderr.trim().split('\n').length, 1)
  }
})

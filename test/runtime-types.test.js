// The declarations TypeScript users get: built from the JSDoc as `npm run types` builds them, then used by a TypeScript
// program the way an app would (node:http, Express, Fastify, Koa, prom-client). Wrong code must fail to compile too.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT } from './helpers/cli.js'

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc')

const APP = `
import http from 'node:http'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'
import client from 'prom-client'
import { monitor, overloadProtection, registerMetrics, Sampler, ListenerWatcher, AgentWatcher, TYPE_EVENT_LOOP_DELAY } from 'hotpath/runtime'
import type { Sample, MonitorSnapshot, OverloadStatus, Pressure, RuntimeMetrics, ListenerGrowth, AgentPool } from 'hotpath/runtime'

const m = monitor({ interval: 1000 })
m.on('sample', (s: Sample) => { const p99: number = s.delay.p99; void p99 })
const snap: MonitorSnapshot = m.snapshot()
const scavenges: number = snap.totals.gc.byKind.scavenge.count

const guard = overloadProtection({ monitor: m, maxEventLoopDelay: 200, retryAfter: 5, exposeStatusRoute: '/status',
  pressureHandler: (req: http.IncomingMessage, res: http.ServerResponse, type: string, value: number) => { void req; void res; void type; void value } })
http.createServer(guard.http((req, res) => { res.end(req.url) }))
const app = express()
app.use(guard.express())
const koa = new Koa()
koa.use(guard.koa())
const fastify = Fastify()
fastify.register(guard.fastify())
const status: OverloadStatus = guard.status()
const pressure: Pressure | null = guard.pressure()
const busy: boolean = guard.isUnderPressure() && pressure?.type === TYPE_EVENT_LOOP_DELAY

const metrics: RuntimeMetrics = registerMetrics(new client.Registry(), { monitor: m, listeners: { threshold: 20 }, agents: true })
metrics.close()
const sampler = new Sampler({ interval: 10, onSample: (s) => s.gc.byKind['mark-compact'].duration })
sampler.start()
const growth: ListenerGrowth[] = new ListenerWatcher({ threshold: 10 }).snapshot()
const pools: AgentPool[] = new AgentWatcher().snapshot()
console.log(scavenges, status.status, busy, growth[0]?.site?.line, pools[0]?.maxQueued)
`

const WRONG = `
import { monitor, overloadProtection } from 'hotpath/runtime'
overloadProtection({ maxEventLoopDelay: '200' })
const n: string = monitor().snapshot().delay.max
`

test('the generated declarations type an app that uses hotpath/runtime, and reject one that misuses it', { timeout: 120000 }, () => {
  // inside the repository (in .cache, which git ignores) so that the app finds express, fastify, koa and prom-client
  mkdirSync(join(ROOT, '.cache'), { recursive: true })
  const dir = mkdtempSync(join(ROOT, '.cache', 'types-test-'))
  try {
    const built = spawnSync(process.execPath, [TSC, '-p', join(ROOT, 'tsconfig.types.json'), '--outDir', join(dir, 'types')], { cwd: ROOT, encoding: 'utf8' })
    assert.equal(built.status, 0, built.stdout + built.stderr)
    const tsconfig = {
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        esModuleInterop: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        paths: { 'hotpath/runtime': [join(dir, 'types/runtime/index.d.ts')] }
      },
      files: ['app.ts']
    }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig))
    writeFileSync(join(dir, 'app.ts'), APP)
    const ok = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' })
    assert.equal(ok.status, 0, ok.stdout + ok.stderr)
    writeFileSync(join(dir, 'app.ts'), WRONG)
    const wrong = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' })
    assert.notEqual(wrong.status, 0)
    // the string threshold (line 3) and the number read as a string (line 4)
    assert.match(wrong.stdout, /app\.ts\(3,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/)
    assert.match(wrong.stdout, /app\.ts\(4,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

// The PostgreSQL and Redis that examples waiting on a database need, started once per test file when one asks, and
// stopped by PID by stopBackends() (a test file calls it in a top-level after()): examples read DATABASE_URL and
// REDIS_URL.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './cli.js'
import { missing, startDelayProxy, startPostgres, startRedis } from '../../examples/backends/backends.js'

/** @type {Promise<{ env: Record<string, string>, stop: () => Promise<void> }> | null} */
let started = null

/**
 * What an example reads from the environment to reach its backends, and what of it this machine cannot run.
 * @param {string} example a folder of examples/
 * @returns {{ needs: ('postgres' | 'redis')[], missing: string | null }}
 */
export function exampleNeeds (example) {
  const source = readFileSync(join(ROOT, 'examples', example, 'server.js'), 'utf8')
  /** @type {('postgres' | 'redis')[]} */
  const needs = []
  if (source.includes('DATABASE_URL')) needs.push('postgres')
  if (source.includes('REDIS_URL')) needs.push('redis')
  const m = missing()
  return { needs, missing: needs.map(n => m[n]).find(x => x !== null) ?? null }
}

/**
 * The environment of the examples' backends: a throwaway PostgreSQL and Redis (behind a 1 ms hop, as a cache across a
 * network), started on the first call.
 * @returns {Promise<Record<string, string>>}
 */
export async function backendsEnv () {
  started ??= (async () => {
    // Both or neither: one that started beside one that failed would outlive the test file and keep it from ending.
    const [pgStart, redisStart] = await Promise.allSettled([startPostgres(), startRedis()])
    if (pgStart.status === 'rejected' || redisStart.status === 'rejected') {
      for (const s of [pgStart, redisStart]) if (s.status === 'fulfilled') await s.value.stop()
      throw pgStart.status === 'rejected' ? pgStart.reason : /** @type {PromiseRejectedResult} */ (redisStart).reason
    }
    const pg = pgStart.value
    const redis = redisStart.value
    const hop = await startDelayProxy(redis.port, 1)
    return {
      env: { DATABASE_URL: pg.url, REDIS_URL: `redis://127.0.0.1:${hop.port}` },
      stop: async () => {
        await hop.close()
        await Promise.all([pg.stop(), redis.stop()])
      }
    }
  })()
  return (await started).env
}

/** Stops what backendsEnv() started, if it did. */
export async function stopBackends () {
  const s = started
  started = null
  // A start that failed has stopped what it started.
  const backends = await s?.catch(() => null)
  await backends?.stop()
}

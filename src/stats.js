// Small statistics used to judge whether a difference is beyond noise, and to fit trends. Shared by the load layer
// (compare) and the analysis, so it sits below both.

/** Mean of a list; 0 for an empty one. @param {number[]} xs */
export function mean (xs) {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length
}

/** Sample variance (n - 1). @param {number[]} xs */
export function variance (xs) {
  if (xs.length < 2) return NaN
  const m = mean(xs)
  return xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)
}

/**
 * Welch's two-sample t-test (unequal variances). Returns the two-sided p-value; NaN when either side has fewer than
 * two samples.
 * @param {number[]} a
 * @param {number[]} b
 * @returns {{ t: number, df: number, p: number }}
 */
export function welch (a, b) {
  const na = a.length
  const nb = b.length
  if (na < 2 || nb < 2) return { t: NaN, df: NaN, p: NaN }
  const va = variance(a) / na
  const vb = variance(b) / nb
  const se = Math.sqrt(va + vb)
  const diff = mean(b) - mean(a)
  if (se === 0) return { t: diff === 0 ? 0 : Infinity, df: na + nb - 2, p: diff === 0 ? 1 : 0 }
  const t = diff / se
  const df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
  return { t, df, p: studentTwoSided(t, df) }
}

/**
 * Student's two-sample t-test with the variances pooled: for few samples of one kind of noise (a fresh process's
 * speed, whichever arm it serves), where Welch's would estimate each arm's spread from two or three values alone.
 * Returns the two-sided p-value; NaN with fewer than three samples in all, or one side empty.
 * @param {number[]} a
 * @param {number[]} b
 * @returns {{ t: number, df: number, p: number }}
 */
export function pooledT (a, b) {
  const na = a.length
  const nb = b.length
  const df = na + nb - 2
  if (na < 1 || nb < 1 || df < 1) return { t: NaN, df: NaN, p: NaN }
  // Each side's sum of squared deviations; one value alone adds none.
  const squares = (/** @type {number[]} */ xs) => xs.length < 2 ? 0 : variance(xs) * (xs.length - 1)
  const se = Math.sqrt((squares(a) + squares(b)) / df * (1 / na + 1 / nb))
  const diff = mean(b) - mean(a)
  if (se === 0) return { t: diff === 0 ? 0 : Infinity, df, p: diff === 0 ? 1 : 0 }
  const t = diff / se
  return { t, df, p: studentTwoSided(t, df) }
}

/**
 * Two-sided tail probability of Student's t distribution: P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
 * @param {number} t
 * @param {number} df
 */
export function studentTwoSided (t, df) {
  if (!Number.isFinite(t)) return 0
  return incompleteBeta(df / (df + t * t), df / 2, 0.5)
}

/**
 * Regularised incomplete beta I_x(a, b), by its continued fraction (Lentz's method).
 * @param {number} x
 * @param {number} a
 * @param {number} b
 * @returns {number}
 */
export function incompleteBeta (x, a, b) {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x))
  // The fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) otherwise.
  if (x > (a + 1) / (a + b + 2)) return 1 - incompleteBeta(1 - x, b, a)
  const tiny = 1e-300
  let c = 1
  let d = 1 - ((a + b) * x) / (a + 1)
  d = 1 / (Math.abs(d) < tiny ? tiny : d)
  let f = d
  for (let m = 1; m <= 300; m++) {
    for (const numerator of [
      (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)),
      -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
    ]) {
      d = 1 + numerator * d
      d = 1 / (Math.abs(d) < tiny ? tiny : d)
      c = 1 + numerator / c
      if (Math.abs(c) < tiny) c = tiny
      f *= c * d
    }
    if (Math.abs(c * d - 1) < 1e-12) break
  }
  return (front * f) / a
}

const LANCZOS = [
  676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7
]

/**
 * log Γ(z) by the Lanczos approximation (g = 7), accurate to ~15 digits for z > 0.
 * @param {number} z
 * @returns {number}
 */
export function logGamma (z) {
  if (z < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * z))) - logGamma(1 - z)
  const x = z - 1
  let sum = 0.99999999999980993
  for (let i = 0; i < LANCZOS.length; i++) sum += LANCZOS[i] / (x + i + 1)
  const t = x + LANCZOS.length - 0.5
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(sum)
}

/**
 * Least-squares line through (x, y) points, with the slope's standard error.
 * @param {number[]} xs
 * @param {number[]} ys
 * @returns {{ slope: number, intercept: number, r2: number, slopeStdErr: number }}
 */
export function linearFit (xs, ys) {
  const n = xs.length
  const mx = mean(xs)
  const my = mean(ys)
  let sxx = 0
  let sxy = 0
  let syy = 0
  for (let i = 0; i < n; i++) {
    sxx += (xs[i] - mx) ** 2
    sxy += (xs[i] - mx) * (ys[i] - my)
    syy += (ys[i] - my) ** 2
  }
  const slope = sxx === 0 ? 0 : sxy / sxx
  const intercept = my - slope * mx
  const residual = Math.max(0, syy - slope * sxy)
  const r2 = syy === 0 ? 0 : 1 - residual / syy
  const slopeStdErr = n > 2 && sxx > 0 ? Math.sqrt(residual / (n - 2) / sxx) : NaN
  return { slope, intercept, r2, slopeStdErr }
}

/**
 * Percentile by nearest rank of an unsorted list.
 * @param {number[]} values
 * @param {number} p 0..100
 */
export function percentile (values, p) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

/**
 * The p-th percentile of values that each stand for `weight` of them (nearest rank, as `percentile`); with every
 * weight 1 it is `percentile`.
 * @param {number[]} values
 * @param {number[]} weights one per value, > 0
 * @param {number} p 0..100
 */
export function weightedPercentile (values, weights, p) {
  if (values.length === 0) return 0
  const order = values.map((_, i) => i).sort((a, b) => values[a] - values[b])
  const total = weights.reduce((a, w) => a + w, 0)
  const rank = Math.max(Math.ceil((p / 100) * total), Number.MIN_VALUE)
  let seen = 0
  for (const i of order) {
    seen += weights[i]
    if (seen >= rank) return values[i]
  }
  return values[order[order.length - 1]]
}

/**
 * A fitted slope over its standard error: how surely it differs from flat. A perfect fit (no residual) is infinitely
 * sure of a rising slope.
 * @param {{ slope: number, slopeStdErr: number }} fit
 */
export function slopeT (fit) {
  return Number.isFinite(fit.slopeStdErr) && fit.slopeStdErr > 0 ? fit.slope / fit.slopeStdErr : (fit.slope > 0 ? Infinity : 0)
}

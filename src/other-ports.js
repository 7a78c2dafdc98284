/**
 * The other ports the target served HTTP on, in the order given: a verdict about the loaded port is not about these
 * (an app's API, when its metrics port opened first and was loaded). Read from what the probes reported listening,
 * live (the run's channel) or recorded (its event logs).
 * @param {readonly { port: number, http?: boolean }[]} listening in the order the listeners opened
 * @param {number} port the loaded one
 * @returns {number[]}
 */
export function otherHttpPorts (listening, port) {
  return [...new Set(listening.filter(l => l.http === true && l.port !== port).map(l => l.port))]
}

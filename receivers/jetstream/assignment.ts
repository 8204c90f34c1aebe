/**
 * How the instances of a group share the partitions: each instance works out its own share from
 * the member list it sees, so no coordinator is needed. Sorted member ids give everyone the same
 * order; the first `partitions % members` instances take one extra partition. Views that differ
 * for a moment (a member just joined or expired) settle within a lease renewal or two, and the
 * revision checks on the lease keys keep any two instances from owning one partition meanwhile.
 */

/** How many partitions `me` should own among `members` (`me` counts even if not listed yet). */
export function fairShare(members: readonly string[], me: string, partitions: number): number {
  const all = [...new Set([...members, me])].sort();
  const index = all.indexOf(me);
  return Math.floor(partitions / all.length) + (index < partitions % all.length ? 1 : 0);
}

/**
 * The order in which `me` tries free partitions: starting where its share would begin if the
 * partitions were dealt out in blocks, so instances joining together mostly try different ones.
 */
export function acquisitionOrder(members: readonly string[], me: string, partitions: number): number[] {
  const all = [...new Set([...members, me])].sort();
  const start = Math.floor((all.indexOf(me) * partitions) / all.length);
  return Array.from({ length: partitions }, (_, i) => (start + i) % partitions);
}

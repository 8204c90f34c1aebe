/**
 * Which modules register the built-in components: a shard thread of a sharded run (core/shards)
 * imports them to know the same components, without the kernel importing receivers/ or sinks/.
 */

/** Modules whose import registers components. */
const registrars = new Set<string>();

/**
 * Says that importing `moduleUrl` registers components, as the built-in sources' and sinks'
 * modules say of themselves once they have registered them.
 */
export function registersComponents(moduleUrl: string): void {
  registrars.add(moduleUrl);
}

/** The modules declared with `registersComponents`, in the order they were. */
export function componentRegistrars(): string[] {
  return [...registrars];
}

/** Drops positions and comments from a syntax tree so trees can be compared by shape. */
export function stripPositions<T>(node: T): T {
  return JSON.parse(
    JSON.stringify(node, (key, value: unknown) =>
      key === 'pos' || key === 'endPos' || key === 'keyPos' || key === 'comments' ? undefined : value,
    ),
  ) as T;
}

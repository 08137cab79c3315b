/**
 * Round-robin source of subjects for GenerateJwt calls that name none, as the servers of
 * the public Node-vs-Go JWT/gRPC benchmark hand out theirs (its ghz command names none).
 */
export interface SubjectPool {
  next(): string;
}

/**
 * A pool over a fixed list. A plain index is safe: handlers run on one thread, and in
 * cluster mode each worker has its own pool (so the rotation is per worker).
 */
export function createSubjectPool(subjects: readonly string[]): SubjectPool {
  const list = [...subjects];
  let index = 0;
  return {
    next() {
      const subject = list[index] as string;
      index = index + 1 === list.length ? 0 : index + 1;
      return subject;
    },
  };
}

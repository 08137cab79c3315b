/**
 * Round-robin source of subjects for GenerateJwt calls that name none, as the Go peer in
 * bench/peers/go/main.go hands out its own: the benchmark's ghz request names no subject,
 * so both servers sign the same spread of subjects.
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

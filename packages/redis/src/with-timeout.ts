/**
 * `promise`, or a rejection with `onTimeout()`'s error once `ms` (real time) have passed first.
 * The timer is unref'd and cleared when `promise` settles; a late rejection of `promise` is
 * handled (never unhandled).
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

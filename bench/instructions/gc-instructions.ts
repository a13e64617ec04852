/**
 * The instructions a callgrind profile spent collecting garbage: the inclusive cost of every call
 * into one of V8's collector entry points (a scavenge or full collection asked for by an
 * allocation or a task, an incremental marking step) made from outside the collector. The HTTP
 * counts subtract it, so a case that made a full collection in one process and not in the other
 * (Express makes one every thousand requests or so) still reads its requests' own work.
 */

/** Where V8 enters its collector: from an allocation, from a task it posted, or from an allocation observer. */
const ENTRY =
  /^v8::internal::(?:Heap::CollectGarbage|Heap::CollectAllGarbage|Heap::CollectAllAvailableGarbage|MinorGCJob::Task::RunInternal|ScavengeJob::Task::RunInternal|IncrementalMarkingJob::Task::RunInternal|IncrementalMarking::Observer::Step|MemoryReducer::TimerTask::RunInternal)\(/;
/** The collector's own functions: a call from one of them is inside a collection already counted. */
const COLLECTOR =
  /^v8::internal::(?:Heap|IncrementalMarking|IncrementalMarkingJob|MinorGCJob|ScavengeJob|MarkCompactCollector|MinorMarkCompactCollector|ScavengerCollector|Scavenger|GCTracer|MemoryReducer)::/;

/**
 * Sums the inclusive costs of the calls into {@link ENTRY} from callers outside {@link COLLECTOR},
 * in a callgrind profile (its `fn=`/`cfn=` names, compressed or not; the first event column).
 */
export function gcInstructions(profile: string): number {
  const names = new Map<string, string>();
  const named = (spec: string): string => {
    // `(id) name` defines a compressed name, `(id)` reuses it; an uncompressed name is itself.
    const compressed = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (compressed === null) return spec;
    if (compressed[2] !== undefined) names.set(compressed[1]!, compressed[2]);
    return names.get(compressed[1]!) ?? '';
  };
  let caller = '';
  let callee = '';
  let callCost = false;
  let total = 0;
  for (const line of profile.split('\n')) {
    if (line.startsWith('fn=')) caller = named(line.slice(3));
    else if (line.startsWith('cfn=')) callee = named(line.slice(4));
    else if (line.startsWith('calls=')) callCost = true;
    else if (callCost) {
      const cost = /^(?:[+-]?\d+|\*) (\d+)/.exec(line);
      if (cost === null) continue;
      callCost = false;
      if (ENTRY.test(callee) && !COLLECTOR.test(caller)) total += Number(cost[1]);
    }
  }
  return total;
}

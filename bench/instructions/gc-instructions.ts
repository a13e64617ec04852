/**
 * The instructions a callgrind profile spent collecting garbage: the inclusive cost of every call
 * into one of V8's collector entry points (a scavenge or full collection asked for by an
 * allocation or a task, an incremental marking step) made from outside the collector. The HTTP
 * counts subtract it, so a case that made a full collection in one process and not in the other
 * (Express makes one every thousand requests or so) still reads its requests' own work.
 */
import { readCallgrind, splitCallKey } from './callgrind-profile';

/** Where V8 enters its collector: from an allocation, from a task it posted, or from an allocation observer. */
const ENTRY =
  /^v8::internal::(?:Heap::CollectGarbage|Heap::CollectAllGarbage|Heap::CollectAllAvailableGarbage|MinorGCJob::Task::RunInternal|ScavengeJob::Task::RunInternal|IncrementalMarkingJob::Task::RunInternal|IncrementalMarking::Observer::Step|MemoryReducer::TimerTask::RunInternal)\(/;
/** The collector's own functions: a call from one of them is inside a collection already counted. */
const COLLECTOR =
  /^v8::internal::(?:Heap|IncrementalMarking|IncrementalMarkingJob|MinorGCJob|ScavengeJob|MarkCompactCollector|MinorMarkCompactCollector|ScavengerCollector|Scavenger|GCTracer|MemoryReducer)::/;

/**
 * Sums the inclusive costs of the calls into {@link ENTRY} from callers outside {@link COLLECTOR},
 * in a callgrind profile's text.
 */
export function gcInstructions(profile: string): number {
  let total = 0;
  for (const [key, instructions] of readCallgrind(profile).calls) {
    const { caller, callee } = splitCallKey(key);
    if (ENTRY.test(callee) && !COLLECTOR.test(caller)) total += instructions;
  }
  return total;
}

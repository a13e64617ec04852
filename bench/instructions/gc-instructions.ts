/**
 * The instructions a callgrind profile spent collecting garbage: the inclusive cost of every call
 * into one of V8's collector entry points (a scavenge or full collection asked for by an
 * allocation or a task, an incremental marking step) made from outside the collector, and the
 * full collections among them. The HTTP counts subtract the instructions, so a case that made a
 * full collection in one process and not in the other (Express makes one every thousand requests
 * or so) still reads its requests' own work; the table marks such a case.
 */
import { readCallgrind, splitCallKey } from './callgrind-profile';

/** Where V8 enters its collector: from an allocation, from a task it posted, or from an allocation observer. */
const ENTRY =
  /^v8::internal::(?:Heap::CollectGarbage|Heap::CollectAllGarbage|Heap::CollectAllAvailableGarbage|MinorGCJob::Task::RunInternal|ScavengeJob::Task::RunInternal|IncrementalMarkingJob::Task::RunInternal|IncrementalMarking::Observer::Step|MemoryReducer::TimerTask::RunInternal)\(/;
/** The collector's own functions: a call from one of them is inside a collection already counted. */
const COLLECTOR =
  /^v8::internal::(?:Heap|IncrementalMarking|IncrementalMarkingJob|MinorGCJob|ScavengeJob|MarkCompactCollector|MinorMarkCompactCollector|ScavengerCollector|Scavenger|GCTracer|MemoryReducer)::/;

/** Where V8 runs a full (mark-compact) collection: once each. */
const FULL_COLLECTION = /^v8::internal::Heap::MarkCompact\(/;

/** What a process spent collecting garbage, read from its callgrind profile. */
export interface GarbageCollection {
  /** The inclusive instructions of the calls into {@link ENTRY} from callers outside {@link COLLECTOR}. */
  readonly instructions: number;
  /** Full (mark-compact) collections: one costs about as much as a hundred requests. */
  readonly fullCollections: number;
}

/**
 * What a callgrind profile's text spent collecting garbage (see {@link GarbageCollection}).
 * @throws Error when the profile never enters the collector: a process that served a thousand
 *   requests always collects, so the entry points (V8 11.3's, Node 20's) were renamed by another
 *   V8, and a count "without GC" would silently be the total.
 */
export function garbageCollection(profile: string): GarbageCollection {
  const { calls, callCounts } = readCallgrind(profile);
  let instructions = 0;
  let entered = false;
  for (const [key, cost] of calls) {
    const { caller, callee } = splitCallKey(key);
    if (!ENTRY.test(callee)) continue;
    entered = true;
    if (!COLLECTOR.test(caller)) instructions += cost;
  }
  if (!entered) {
    throw new Error(
      `no call into V8's collector in the profile (${ENTRY.source.slice(0, 60)}…): this V8 names its entry points otherwise; update gc-instructions.ts`,
    );
  }
  let fullCollections = 0;
  for (const [key, count] of callCounts) if (FULL_COLLECTION.test(splitCallKey(key).callee)) fullCollections += count;
  return { instructions, fullCollections };
}

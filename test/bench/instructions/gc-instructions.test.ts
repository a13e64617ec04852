import { garbageCollection } from '../../../bench/instructions/gc-instructions';

/** A callgrind profile in its own format: two JIT functions allocating, a task, and the collector inside. */
const PROFILE = [
  'events: Ir',
  'fn=(1) 0x000000000d127f80',
  '0 500',
  'cfn=(2) v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)',
  'calls=1 0',
  '0 9000',
  'cfn=(3) v8::internal::IncrementalMarking::Observer::Step(int, unsigned long, unsigned long)',
  'calls=2 0',
  '0 700',
  'fn=(4) non-virtual thunk to v8::internal::CancelableTask::Run()',
  'cfn=(5) v8::internal::MinorGCJob::Task::RunInternal()',
  'calls=1 0',
  '+2 3000',
  'fn=(5)',
  'cfn=(2)',
  'calls=1 0',
  '0 2900',
  'fn=(6) v8::internal::Heap::FinalizeIncrementalMarkingIfComplete(v8::internal::GarbageCollectionReason)',
  'cfn=(2)',
  'calls=1 0',
  '0 40000',
  'fn=(8) v8::internal::Heap::PerformGarbageCollection(v8::internal::GarbageCollector)',
  'cfn=(9) v8::internal::Heap::MarkCompact()',
  'calls=2 0',
  '0 38000',
  'fn=(1)',
  'cfn=(7) Builtins_LoadIC',
  'calls=3 0',
  '* 80',
  '',
].join('\n');

describe('garbageCollection', () => {
  it('sums the calls into the collector from outside it, once each, and counts the full collections', () => {
    // 9,000 (an allocation's collection) + 700 (a marking step) + 3,000 (a scavenge task, whose
    // own call of CollectGarbage is inside it); the finalization's call and the mark-compacts
    // are the collector's own.
    expect(garbageCollection(PROFILE)).toEqual({ instructions: 12_700, fullCollections: 2 });
  });

  it('refuses a profile that never enters the collector: another V8 names its entry points otherwise', () => {
    expect(() => garbageCollection('events: Ir\nfn=(1) main\n0 100\ncfn=(2) f\ncalls=1 0\n0 50\n')).toThrow(
      "no call into V8's collector in the profile",
    );
  });
});

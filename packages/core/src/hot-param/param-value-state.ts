/**
 * The state a QPS hotspot rule keeps for one value: one small object per value in one LRU
 * (Sentinel keeps two maps, times and tokens; one object halves the lookups and the entries).
 */
export class ParamValueState {
  constructor(
    /**
     * `reject`: when tokens were last added (clock ms). `throttle`: when the latest admitted
     * call is due (the end of the pacing queue).
     */
    public time: number,
    /** `reject`: the tokens left. Unused by `throttle` (0). */
    public tokens: number,
  ) {}
}

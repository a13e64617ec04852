/** Defaults of the {@link FloodgateOptions}. */
export const FLOODGATE_DEFAULTS = Object.freeze({
  /** Most resources tracked; as Sentinel's `MAX_SLOT_CHAIN_SIZE`. Resources with rules are always tracked. */
  maxResources: 6000,
});

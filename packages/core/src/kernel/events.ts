import diagnosticsChannel from 'node:diagnostics_channel';
import { show } from './rule-reader';

/** A listener of event `K` of the event map `M`. */
export type Listener<M, K extends keyof M> = (event: M[K]) => void;

/**
 * Typed listeners per event, each event also published on a `node:diagnostics_channel`
 * channel (so APM agents can subscribe without a dependency) as `{ floodgate, event }`, naming
 * the engine that emitted it. Emitting costs two length checks when nobody listens or
 * subscribes; callers check {@link EventHub.has} before building an event's payload, and the
 * channel's message is built only when the channel has subscribers.
 *
 * A listener that throws does not break the call that emitted: the first error of each
 * listener is reported with `process.emitWarning`, later ones are only counted
 * ({@link EventHub.listenerErrors}), so a broken listener cannot flood stderr under attack.
 */
export class EventHub<M extends object> {
  /** Plain objects keyed by event (not Maps): `has()` runs on the hot path. */
  private readonly listeners = {} as Record<keyof M, readonly Listener<M, keyof M>[]>;
  private readonly channels = {} as Record<keyof M, diagnosticsChannel.Channel>;
  private readonly reported = new WeakSet<object>();
  private errors = 0;

  /**
   * @param channelNames - the diagnostics channel of each event (`'floodgate:block'`, ...); the
   * keys are the events this hub knows.
   * @param source - what emits the events (the engine): the `floodgate` of each channel message.
   */
  constructor(
    channelNames: { readonly [K in keyof M]: string },
    private readonly source: object,
  ) {
    for (const name of Object.keys(channelNames) as (keyof M)[]) {
      this.channels[name] = diagnosticsChannel.channel(channelNames[name]);
      this.listeners[name] = [];
    }
  }

  /** How many times a listener threw (each listener's first error is also reported as a warning). */
  get listenerErrors(): number {
    return this.errors;
  }

  /** Whether anyone listens to `name`, or subscribes to its diagnostics channel. */
  has(name: keyof M): boolean {
    return this.listeners[name].length > 0 || this.channels[name].hasSubscribers;
  }

  /**
   * Adds a listener; returns a function that removes it.
   * @throws TypeError for an unknown event or a listener that is not a function.
   */
  on<K extends keyof M>(name: K, listener: Listener<M, K>): () => void {
    const list = Object.hasOwn(this.listeners, name) ? this.listeners[name] : undefined;
    if (list === undefined) {
      throw new TypeError(`Unknown Floodgate event ${show(name)} (known: ${Object.keys(this.listeners).join(', ')})`);
    }
    if (typeof listener !== 'function')
      throw new TypeError(`Listener for "${String(name)}" must be a function, got ${show(listener)}`);
    this.listeners[name] = [...list, listener as Listener<M, keyof M>];
    return () => this.off(name, listener);
  }

  /** Removes a listener. */
  off<K extends keyof M>(name: K, listener: Listener<M, K>): void {
    if (Object.hasOwn(this.listeners, name)) this.listeners[name] = this.listeners[name].filter((l) => l !== listener);
  }

  /** Calls every listener of `name` with `event`, then publishes `{ floodgate: source, event }` on the event's channel. */
  emit<K extends keyof M>(name: K, event: M[K]): void {
    const list = this.listeners[name];
    for (let i = 0; i < list.length; i++) {
      const listener = list[i]!;
      try {
        listener(event);
      } catch (error) {
        this.listenerFailed(String(name), listener, error);
      }
    }
    const channel = this.channels[name];
    if (channel.hasSubscribers) channel.publish({ floodgate: this.source, event });
  }

  private listenerFailed(name: string, listener: object, error: unknown): void {
    this.errors++;
    if (this.reported.has(listener)) return;
    this.reported.add(listener);
    process.emitWarning(
      `A Floodgate "${name}" listener threw (reported once per listener; later errors are only counted): ${String(error)}`,
      {
        code: 'FLOODGATE_LISTENER_ERROR',
        detail: error instanceof Error ? error.stack : undefined,
      },
    );
  }
}

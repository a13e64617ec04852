import diagnosticsChannel from 'node:diagnostics_channel';
import { show } from './rule-reader';

/** A listener of event `K` of the event map `M`. */
export type Listener<M, K extends keyof M> = (event: M[K]) => void;

/**
 * Typed listeners per event, each event also published on a `node:diagnostics_channel`
 * channel (so APM agents can subscribe without a dependency) as `{ floodgate, event }`, naming
 * the engine that emitted it. Emitting costs two length checks when nobody listens or
 * subscribes; callers check {@link EventHub.has} before building an event's payload (a hot path
 * holds the event's {@link Topic} and asks it), and the channel's message is built only when
 * the channel has subscribers.
 *
 * A listener that throws does not break the call that emitted: the first error of each
 * listener is reported with `process.emitWarning`, later ones are only counted
 * ({@link EventHub.listenerErrors}), so a broken listener cannot flood stderr under attack.
 */
export class EventHub<M extends object> {
  private readonly topics = {} as { [K in keyof M]: Topic<M[K]> };
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
      this.topics[name] = new Topic(String(name), diagnosticsChannel.channel(channelNames[name]));
    }
  }

  /** How many times a listener threw (each listener's first error is also reported as a warning). */
  get listenerErrors(): number {
    return this.errors;
  }

  /** Whether anyone listens to `name`, or subscribes to its diagnostics channel. */
  has(name: keyof M): boolean {
    return this.topics[name].active;
  }

  /**
   * The event's listeners and channel, for a hot path to hold and ask (`active`, `publish`): a
   * lookup by name shared by every event is a megamorphic one, which cost a blocked
   * `tryEntry()` 15 % of its instructions (bench/instructions).
   */
  topic<K extends keyof M>(name: K): Topic<M[K]> {
    return this.topics[name];
  }

  /**
   * Adds a listener; returns a function that removes it.
   * @throws TypeError for an unknown event or a listener that is not a function.
   */
  on<K extends keyof M>(name: K, listener: Listener<M, K>): () => void {
    const topic = Object.hasOwn(this.topics, name) ? this.topics[name] : undefined;
    if (topic === undefined) {
      throw new TypeError(`Unknown Floodgate event ${show(name)} (known: ${Object.keys(this.topics).join(', ')})`);
    }
    if (typeof listener !== 'function')
      throw new TypeError(`Listener for "${String(name)}" must be a function, got ${show(listener)}`);
    topic.listeners = [...topic.listeners, listener];
    return () => this.off(name, listener);
  }

  /** Removes a listener. */
  off<K extends keyof M>(name: K, listener: Listener<M, K>): void {
    if (!Object.hasOwn(this.topics, name)) return;
    const topic = this.topics[name];
    topic.listeners = topic.listeners.filter((l) => l !== listener);
  }

  /** Calls every listener of `name` with `event`, then publishes `{ floodgate: source, event }` on the event's channel. */
  emit<K extends keyof M>(name: K, event: M[K]): void {
    this.publish(this.topics[name], event);
  }

  /** `emit` on a topic held (see {@link EventHub.topic}). */
  publish<E>(topic: Topic<E>, event: E): void {
    const list = topic.listeners;
    for (let i = 0; i < list.length; i++) {
      const listener = list[i]!;
      try {
        listener(event);
      } catch (error) {
        this.listenerFailed(topic.name, listener, error);
      }
    }
    const channel = topic.channel;
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

/** One event of an {@link EventHub}: its listeners and its diagnostics channel. */
export class Topic<E> {
  /** Replaced, never changed in place: an emit in progress keeps the list it started with. */
  listeners: readonly ((event: E) => void)[] = [];

  constructor(
    readonly name: string,
    readonly channel: diagnosticsChannel.Channel,
  ) {}

  /** Whether anyone listens, or subscribes to the channel. */
  get active(): boolean {
    return this.listeners.length > 0 || this.channel.hasSubscribers;
  }
}

type Callback = (event: Event) => unknown;
type Listener = Callback | { handleEvent(event: Event): unknown };
/** addEventListener and removeEventListener, as this file calls them: what it does not wrap goes on as given (its `this`, its arguments, as many as there were). */
type ListenerMethod = (this: unknown, ...args: unknown[]) => void;

/**
 * Keeps what a handler's abort listener throws from ending the process. Node reports a listener's
 * throw on an AbortSignal (or an async one's rejection) as an uncaught exception, a crash of the
 * whole program, from inside `abort()`, whoever aborted: the attempt's timeout, a cancel, a
 * shutdown. A handler's own code is an error for its attempt, never a crash of the queue; so the
 * signal's addEventListener (which Node's `onabort` setter uses too) adds each listener through a
 * wrapper that hands what it threw to `report`. removeEventListener finds the wrapper by the
 * listener given, so a listener removed is removed; one added twice is added once, as before.
 */
export function containListeners(signal: AbortSignal, report: (error: unknown) => void): void {
  const wrappers = new WeakMap<Listener, Callback>();
  // Node's own methods, called below with the `this` and the arguments they were called with.
  const add = Reflect.get(signal, "addEventListener") as ListenerMethod;
  const remove = Reflect.get(signal, "removeEventListener") as ListenerMethod;
  const wrapperOf = (listener: Listener): Callback => {
    let wrapper = wrappers.get(listener);
    if (wrapper === undefined) {
      wrapper = (event: Event) => callContained(signal, listener, event, report);
      wrappers.set(listener, wrapper);
    }
    return wrapper;
  };
  const isListener = (listener: unknown): listener is Listener => typeof listener === "function" || (typeof listener === "object" && listener !== null);
  Object.defineProperties(signal, {
    addEventListener: {
      configurable: true,
      writable: true,
      value(this: unknown, ...args: unknown[]): void {
        // Anything else (null, a string, no listener at all, a call on another target) goes to Node as given, which ignores or refuses it as it would.
        const [, listener] = args;
        if (this === signal && isListener(listener)) args[1] = wrapperOf(listener);
        Reflect.apply(add, this, args);
      },
    },
    removeEventListener: {
      configurable: true,
      writable: true,
      value(this: unknown, ...args: unknown[]): void {
        const [, listener] = args;
        const wrapper = this === signal && isListener(listener) ? wrappers.get(listener) : undefined;
        if (wrapper !== undefined) args[1] = wrapper;
        Reflect.apply(remove, this, args);
      },
    },
  });
}

/**
 * Calls a listener as Node would (a function with the signal as `this`, an object's handleEvent, read as the event
 * comes, with the object as `this`; an object with none is passed over, as Node passes it over), reporting its throw or rejection.
 */
function callContained(signal: AbortSignal, listener: Listener, event: Event, report: (error: unknown) => void): void {
  try {
    let returned: unknown;
    if (typeof listener === "function") returned = listener.call(signal, event);
    else {
      const handleEvent: unknown = Reflect.get(listener, "handleEvent");
      // Node calls nothing for an object without one (`{}`, a handleEvent set later or unset; any falsy value): no error of the handler's to report.
      if (!handleEvent) return;
      returned = Reflect.apply(handleEvent as Callback, listener, [event]);
    }
    if (typeof returned !== "object" || returned === null) return;
    const { then } = returned as { then?: unknown };
    if (typeof then === "function") (then as PromiseLike<unknown>["then"]).call(returned, undefined, report);
  } catch (error) {
    report(error);
  }
}

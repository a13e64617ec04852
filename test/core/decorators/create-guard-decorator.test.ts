import {
  CircuitBreaker,
  Floodgate,
  HotParam,
  RateLimit,
  RuleValidationError,
  type GuardDecorator,
} from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

function engine(): Floodgate {
  return new Floodgate({ clock: new ManualClock(1000) });
}

/** A decorator with its type erased, to apply it where TypeScript would refuse it. */
const loose = (decorator: GuardDecorator): any => decorator;

/** What `fn` throws. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('did not throw');
}

describe('decorating with standard decorators', () => {
  it('refuses a field, naming it', () => {
    expect(() => {
      class Bad {
        @loose(RateLimit({ threshold: 1 }))
        limit = 3;
      }
      return Bad;
    }).toThrow(new TypeError('@RateLimit can only decorate methods, not the field limit'));
  });

  it('refuses a getter', () => {
    expect(() => {
      class Bad {
        @loose(RateLimit({ threshold: 1 }))
        get value(): number {
          return 1;
        }
      }
      return Bad;
    }).toThrow('@RateLimit can only decorate methods, not the getter value');
  });

  it('refuses an auto-accessor', () => {
    expect(() => {
      class Bad {
        @loose(CircuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 }))
        accessor value = 1;
      }
      return Bad;
    }).toThrow('@CircuitBreaker can only decorate methods, not the accessor value');
  });

  it('refuses a class, naming it', () => {
    expect(() => {
      @loose(RateLimit({ threshold: 1 }))
      class Whole {}
      return Whole;
    }).toThrow('@RateLimit cannot decorate class Whole: decorate its methods');
  });

  it('refuses a private method', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1 })
        #secret(): void {}
        use(): void {
          this.#secret();
        }
      }
      return Bad;
    }).toThrow(/cannot decorate the private method #secret/);
  });

  it('refuses a generator method, whose body runs after the call returns', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1 })
        *items(): Generator<number> {
          yield 1;
        }
      }
      return Bad;
    }).toThrow('@RateLimit cannot decorate a generator method (method items): its body runs after the call returns');
  });

  it('fails at class definition on invalid rule options, naming the method and every problem', () => {
    const error = thrownBy(() => {
      class Bad {
        @RateLimit({ threshold: -1, behavior: 'sometimes' as 'reject' })
        getUser(): void {}
      }
      return Bad;
    });
    expect(error).toBeInstanceOf(RuleValidationError);
    expect(error).toMatchObject({
      code: 'ERR_INVALID_RULE',
      issues: [
        { path: 'threshold', message: expect.stringContaining('>= 0, got -1') },
        { path: 'behavior', message: expect.stringContaining('"sometimes"') },
      ],
    });
    expect((error as Error).message).toMatch(/^@RateLimit on method getUser: threshold: /);
  });

  it('refuses a field its rule kind does not know', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1, thresold: 2 } as never)
        getUser(): void {}
      }
      return Bad;
    }).toThrow(expect.objectContaining({ issues: [expect.objectContaining({ path: 'thresold' })] }));
  });

  it('refuses a blockHandler that is neither a name nor a function', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1, blockHandler: 42 as never })
        getUser(): void {}
      }
      return Bad;
    }).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_RULE',
        issues: [expect.objectContaining({ path: 'blockHandler' })],
      }),
    );
  });

  it('refuses an engine that is not a Floodgate', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1, floodgate: {} as Floodgate })
        getUser(): void {}
      }
      return Bad;
    }).toThrow(expect.objectContaining({ issues: [expect.objectContaining({ path: 'floodgate' })] }));
  });

  it('refuses a @HotParam with neither paramIndex nor param', () => {
    expect(() => {
      class Bad {
        @HotParam({ threshold: 1 } as never)
        getUser(_id: string): void {}
      }
      return Bad;
    }).toThrow(
      expect.objectContaining({ issues: expect.arrayContaining([expect.objectContaining({ path: 'paramIndex' })]) }),
    );
  });

  it('refuses a @HotParam with both paramIndex and param', () => {
    expect(() => {
      class Bad {
        @HotParam({ threshold: 1, paramIndex: 0, param: (id: string) => id } as never)
        getUser(_id: string): void {}
      }
      return Bad;
    }).toThrow(
      expect.objectContaining({ issues: expect.arrayContaining([expect.objectContaining({ path: 'param' })]) }),
    );
  });

  it('refuses a @HotParam paramKey without param', () => {
    expect(() => {
      class Bad {
        @HotParam({ threshold: 1, paramIndex: 0, paramKey: 'id' } as never)
        getUser(_id: string): void {}
      }
      return Bad;
    }).toThrow(
      expect.objectContaining({ issues: expect.arrayContaining([expect.objectContaining({ path: 'paramKey' })]) }),
    );
  });

  it('refuses two resources on one method', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1, resource: 'a' })
        @RateLimit({ threshold: 2, resource: 'b' })
        getUser(): void {}
      }
      return Bad;
    }).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_RULE', issues: [expect.objectContaining({ path: 'resource' })] }),
    );
  });

  it('refuses two engines on one method', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1, floodgate: engine() })
        @RateLimit({ threshold: 2, floodgate: engine() })
        getUser(): void {}
      }
      return Bad;
    }).toThrow(expect.objectContaining({ issues: [expect.objectContaining({ path: 'floodgate' })] }));
  });

  it('leaves no rule declared when a decorator of the stack fails', () => {
    const fg = engine();
    expect(() => {
      class Bad {
        @RateLimit({ threshold: -1 })
        @RateLimit({ threshold: 5, resource: 'orders', floodgate: fg })
        place(): void {}
      }
      return Bad;
    }).toThrow(RuleValidationError);
    expect(fg.getRules().flow).toEqual([]);
  });

  it('refuses a static blockHandler name that is not a method of the class when the class is defined', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1, blockHandler: 'nope' })
        static getUser(): void {}
      }
      return Bad;
    }).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(
          /^@RateLimit on Bad\.getUser: blockHandler: must name a static method of Bad, got "nope"/,
        ),
      }),
    );
  });

  it('refuses an instance fallback name that is not a method of the class at the first construction', () => {
    class Bad {
      @RateLimit({ threshold: 1, fallback: 'nope' })
      getUser(): void {}
    }
    expect(() => new Bad()).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_RULE',
        message: expect.stringContaining(
          '@RateLimit on Bad.getUser: fallback: must name an instance method of Bad, got "nope"',
        ),
      }),
    );
  });
});

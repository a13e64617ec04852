import { Floodgate, HotParam, HotParamBlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

function engine(): { clock: ManualClock; fg: Floodgate } {
  const clock = new ManualClock(1000);
  return { clock, fg: new Floodgate({ clock }) };
}

describe('@HotParam', () => {
  it('limits each value of the argument at paramIndex on its own', () => {
    const { fg } = engine();
    class UserService {
      @HotParam({ paramIndex: 0, threshold: 2, floodgate: fg })
      getProfile(userId: string): string {
        return `profile ${userId}`;
      }
    }
    const users = new UserService();
    users.getProfile('alice');
    users.getProfile('alice');
    expect(() => users.getProfile('alice')).toThrow(HotParamBlockError);
    expect(users.getProfile('bob')).toBe('profile bob');
  });

  it('names the offending value in its HotParamBlockError', () => {
    const { fg } = engine();
    class UserService {
      @HotParam({ paramIndex: -1, threshold: 0, floodgate: fg })
      getProfile(_tenant: string, userId: string): string {
        return userId;
      }
    }
    expect(() => new UserService().getProfile('t1', 'alice')).toThrow(
      expect.objectContaining({ code: 'ERR_HOT_PARAM_BLOCKED', resource: 'UserService.getProfile', value: 'alice' }),
    );
  });

  it('limits by the value that param computes from the arguments', () => {
    const { fg } = engine();
    class OrderService {
      @HotParam({ param: (order: { customer: { id: string } }) => order.customer.id, threshold: 1, floodgate: fg })
      place(order: { customer: { id: string } }): string {
        return `placed for ${order.customer.id}`;
      }
    }
    const orders = new OrderService();
    orders.place({ customer: { id: 'c1' } });
    expect(() => orders.place({ customer: { id: 'c1' } })).toThrow(expect.objectContaining({ value: 'c1' }));
    expect(orders.place({ customer: { id: 'c2' } })).toBe('placed for c2');
  });

  it("declares a param rule under the 'param' key by default", () => {
    const { fg } = engine();
    class OrderService {
      @HotParam({ param: (id: string) => id, threshold: 1, floodgate: fg })
      place(_id: string): void {}
    }
    new OrderService();
    expect(fg.getRules().hotParams).toEqual([
      expect.objectContaining({ resource: 'OrderService.place', paramKey: 'param', threshold: 1 }),
    ]);
  });

  it('declares a param rule under the paramKey given, which a loaded rule can then use', () => {
    const { fg } = engine();
    class OrderService {
      @HotParam({
        param: (order: { customer: string }) => order.customer,
        paramKey: 'customer',
        threshold: 100,
        floodgate: fg,
      })
      place(_order: { customer: string }): string {
        return 'placed';
      }
    }
    const orders = new OrderService();
    expect(fg.getRules().hotParams).toEqual([expect.objectContaining({ paramKey: 'customer' })]);
    fg.loadHotParamRules([
      { resource: 'OrderService.place', paramKey: 'customer', threshold: 100, specificItems: { abuser: 0 } },
    ]);
    expect(() => orders.place({ customer: 'abuser' })).toThrow(HotParamBlockError);
    expect(orders.place({ customer: 'someone' })).toBe('placed');
  });

  it('computes param with the same this as the method', () => {
    const { fg } = engine();
    class TenantService {
      readonly tenant = 'acme';
      @HotParam({
        param(this: TenantService) {
          return this.tenant;
        },
        threshold: 1,
        floodgate: fg,
      })
      work(): string {
        return 'done';
      }
    }
    const service = new TenantService();
    service.work();
    expect(() => service.work()).toThrow(expect.objectContaining({ value: 'acme' }));
  });

  it('gives two param hotspots on one method keys of their own', () => {
    const { fg } = engine();
    class Transfers {
      @HotParam({ param: (from: string) => from, threshold: 1, floodgate: fg })
      @HotParam({ param: (_from: string, to: string) => to, threshold: 1 })
      send(_from: string, _to: string): string {
        return 'sent';
      }
    }
    const transfers = new Transfers();
    expect(
      fg
        .getRules()
        .hotParams.map((rule) => rule.paramKey)
        .sort(),
    ).toEqual(['param', 'param1']);
    transfers.send('a', 'b');
    expect(() => transfers.send('c', 'b')).toThrow(expect.objectContaining({ value: 'b' }));
    expect(() => transfers.send('a', 'd')).toThrow(expect.objectContaining({ value: 'a' }));
    expect(transfers.send('e', 'f')).toBe('sent');
  });

  it('does not limit a call whose param value is undefined', () => {
    const { fg } = engine();
    class UserService {
      @HotParam({ param: (user?: { id: string }) => user?.id, threshold: 0, floodgate: fg })
      greet(user?: { id: string }): string {
        return user === undefined ? 'hello stranger' : `hello ${user.id}`;
      }
    }
    expect(new UserService().greet()).toBe('hello stranger');
  });

  it('refills a value after its duration', async () => {
    const { clock, fg } = engine();
    class UserService {
      @HotParam({ paramIndex: 0, threshold: 1, durationMs: 1000, floodgate: fg })
      getProfile(userId: string): string {
        return userId;
      }
    }
    const users = new UserService();
    users.getProfile('alice');
    expect(() => users.getProfile('alice')).toThrow(HotParamBlockError);
    await clock.advance(1001);
    expect(users.getProfile('alice')).toBe('alice');
  });
});

describe('@HotParam paramIndex beyond the method’s parameters', () => {
  it('refuses an index no call can fill, naming the method and its parameters', () => {
    const { fg } = engine();
    expect(() => {
      class UserService {
        @HotParam({ paramIndex: 3, threshold: 1, floodgate: fg })
        getProfile(userId: string): string {
          return userId;
        }
      }
      return UserService;
    }).toThrow(
      "@HotParam on method getProfile: paramIndex: 3 is beyond the method's parameters (it declares 1 parameter)",
    );
  });

  it('refuses a negative index reaching before the first parameter', () => {
    const { fg } = engine();
    expect(() => {
      class UserService {
        @HotParam({ paramIndex: -3, threshold: 1, floodgate: fg })
        find(_tenant: string, _userId: string): void {}
      }
      return UserService;
    }).toThrow('paramIndex: -3 is beyond');
  });

  it('counts parameters with default values and destructuring', () => {
    const { fg } = engine();
    expect(() => {
      class Search {
        @HotParam({ paramIndex: 2, threshold: 1, floodgate: fg })
        query(
          { text }: { text: string },
          [page]: number[] = [1],
          options: { limit?: number } = { limit: Math.max(1, 2) },
        ): string {
          return `${text}${page}${String(options.limit)}`;
        }
      }
      return Search;
    }).not.toThrow();
    expect(() => {
      class Search {
        @HotParam({ paramIndex: 3, threshold: 1, floodgate: fg })
        query(text: string, page = 1, sort = 'a,b'): string {
          return `${text}${page}${sort}`;
        }
      }
      return Search;
    }).toThrow('(it declares 3 parameters)');
  });

  it('accepts any index where the parameters cannot be known: a rest parameter, arguments', () => {
    const { fg } = engine();
    expect(() => {
      class Bulk {
        @HotParam({ paramIndex: 5, threshold: 1, floodgate: fg })
        many(...ids: string[]): number {
          return ids.length;
        }

        @HotParam({ paramIndex: 2, threshold: 1, floodgate: fg })
        legacy(): number {
          return arguments.length;
        }
      }
      return Bulk;
    }).not.toThrow();
  });

  it('limits a parameter read through arguments', () => {
    const { fg } = engine();
    class Legacy {
      @HotParam({ paramIndex: 0, threshold: 1, floodgate: fg })
      read(): unknown {
        // eslint-disable-next-line prefer-rest-params
        return arguments[0];
      }
    }
    const legacy = new Legacy() as unknown as { read(id: string): unknown };
    legacy.read('a');
    expect(() => legacy.read('a')).toThrow(HotParamBlockError);
  });
});

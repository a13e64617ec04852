import { RoutePattern } from '@floodgate/core/http';

describe('RoutePattern', () => {
  it('names the resource by the canonical method and path', () => {
    expect(new RoutePattern('get /users/:id/').resource).toBe('GET /users/:id');
  });

  it('reads a pattern without a method as any method', () => {
    const route = new RoutePattern('/health');
    expect(route.resource).toBe('* /health');
    expect(route.match('DELETE', '/health')).toEqual({});
  });

  it("reads '*' alone as every method and every path", () => {
    const route = new RoutePattern('*');
    expect(route.resource).toBe('* /*');
    expect(route.match('POST', '/a/b/c?x=1')).toEqual({ '*': 'a/b/c' });
    expect(route.match('GET', '/')).toEqual({ '*': '' });
  });

  it('captures path parameters, percent-decoded', () => {
    expect(new RoutePattern('GET /users/:id/posts/:post').match('GET', '/users/a%20b/posts/7')).toEqual({ id: 'a b', post: '7' });
  });

  it('ignores the query string and one trailing slash', () => {
    const route = new RoutePattern('GET /users/:id');
    expect(route.match('GET', '/users/42/?full=1')).toEqual({ id: '42' });
  });

  it('does not match another method', () => {
    expect(new RoutePattern('GET /users/:id').match('POST', '/users/42')).toBeUndefined();
  });

  it('does not match a longer or shorter path', () => {
    const route = new RoutePattern('GET /users/:id');
    expect(route.match('GET', '/users/42/posts')).toBeUndefined();
    expect(route.match('GET', '/users')).toBeUndefined();
    expect(route.match('GET', '/users/')).toBeUndefined();
  });

  it('matches literal segments exactly, not by prefix', () => {
    const route = new RoutePattern('/api/*');
    expect(route.match('GET', '/apix/1')).toBeUndefined();
    expect(route.match('GET', '/api')).toEqual({ '*': '' });
    expect(route.match('GET', '/api/v1/users')).toEqual({ '*': 'v1/users' });
  });

  it('keeps a malformed percent-encoding as it is', () => {
    expect(new RoutePattern('/files/:name').match('GET', '/files/%E0%A4%A')).toEqual({ name: '%E0%A4%A' });
  });

  it('matches the root path', () => {
    const route = new RoutePattern('GET /');
    expect(route.match('GET', '/')).toEqual({});
    expect(route.match('GET', '/?q=1')).toEqual({});
    expect(route.match('GET', '/a')).toBeUndefined();
  });

  it('matches without capturing when asked not to', () => {
    expect(new RoutePattern('GET /users/:id/*').match('GET', '/users/1/a/b', false)).toEqual({});
    expect(new RoutePattern('GET /users/:id').match('GET', '/users', false)).toBeUndefined();
  });

  it('lists its parameter names', () => {
    expect(new RoutePattern('GET /a/:x/:y/*').paramNames).toEqual(['x', 'y', '*']);
  });

  it.each([
    ['', 'is empty'],
    ['GET users', "must start with '/'"],
    ['GET /a b', 'more than a method and a path'],
    ['G3T /a', 'not an HTTP method'],
    ['/a//b', 'empty segment'],
    ['/*/a', 'only be the last segment'],
    ['/a/:', "':' followed by a name"],
    ['/a/:id/:id', 'appears twice'],
    ['/flights/:from-:to', 'followed by a name'],
    ['/files/v1:2', 'mixes text'],
    ['/a?b=1', "must not contain '?'"],
  ])('rejects %j, saying why', (pattern, reason) => {
    expect(() => new RoutePattern(pattern)).toThrow(`Invalid route pattern ${JSON.stringify(pattern)}`);
    expect(RoutePattern.problem(pattern)).toContain(reason);
  });
});

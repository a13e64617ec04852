import { foldCase, requestPath, RoutePattern } from '@floodgate/core/http';

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
    expect(new RoutePattern('GET /users/:id/posts/:post').match('GET', '/users/a%20b/posts/7')).toEqual({
      id: 'a b',
      post: '7',
    });
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
    ['GTE /users/:id', 'is not an HTTP method'],
    ['GET /users/{id}', "write a parameter as ':id'"],
    ['GET /files/{*path}', "write a parameter as ':path'"],
    ['GET /users/:id(\\d+)', 'is not pattern syntax'],
  ])('rejects %j, saying why', (pattern, reason) => {
    expect(() => new RoutePattern(pattern)).toThrow(`Invalid route pattern ${JSON.stringify(pattern)}`);
    expect(RoutePattern.problem(pattern)).toContain(reason);
  });

  it('matches letter case loosely by default, and exactly when asked', () => {
    const route = new RoutePattern('POST /login');
    expect(route.match('POST', '/LOGIN')).toEqual({});
    expect(route.match('POST', '/LOGIN', true, { caseSensitive: true })).toBeUndefined();
    expect(new RoutePattern('GET /Export').match('GET', '/export')).toEqual({});
  });

  it('folds letters beyond ASCII as Fastify does (the Kelvin sign is a k)', () => {
    expect(new RoutePattern('GET /key').match('GET', '/%E2%84%AAey')).toEqual({});
  });

  it('keeps the letter case of captured parameters', () => {
    expect(new RoutePattern('GET /users/:id').match('GET', '/USERS/Alice')).toEqual({ id: 'Alice' });
  });

  it('matches percent-escaped spellings of a literal path', () => {
    const route = new RoutePattern('POST /login');
    expect(route.match('POST', '/%6Cogin')).toEqual({});
    expect(route.match('POST', '/%6c%6F%67%69%6e')).toEqual({});
    expect(route.match('POST', '/%256Cogin')).toBeUndefined();
  });

  it('reads a pattern’s escaped and unescaped literals as one path', () => {
    expect(new RoutePattern('GET /caf%C3%A9').match('GET', '/café')).toEqual({});
    expect(new RoutePattern('GET /café').match('GET', '/caf%c3%a9')).toEqual({});
  });

  it('does not split a segment at an escaped slash, and captures it decoded', () => {
    const route = new RoutePattern('GET /files/:name');
    expect(route.match('GET', '/files/a%2Fb')).toEqual({ name: 'a/b' });
    expect(new RoutePattern('GET /files/a/b').match('GET', '/files/a%2Fb')).toBeUndefined();
  });

  it('decodes a parameter once, however it was escaped', () => {
    expect(new RoutePattern('GET /files/:name').match('GET', '/files/%2541')).toEqual({ name: '%41' });
  });

  it('matches duplicate slashes, a fragment and an absolute-form target', () => {
    const route = new RoutePattern('GET /users/:id');
    expect(route.match('GET', '//users///7//')).toEqual({ id: '7' });
    expect(route.match('GET', '/users/7#top')).toEqual({ id: '7' });
    expect(route.match('GET', 'http://example.com:8080/users/7?x')).toEqual({ id: '7' });
  });

  it('ends the path at a semicolon only when the router does', () => {
    const route = new RoutePattern('GET /users/:id');
    expect(route.match('GET', '/users/7;v=1')).toEqual({ id: '7;v=1' });
    expect(route.match('GET', '/users/7;v=1', true, { semicolonDelimiter: true })).toEqual({ id: '7' });
  });

  it('matches the asterisk-form target only with the global pattern', () => {
    expect(new RoutePattern('OPTIONS /').match('OPTIONS', '*')).toBeUndefined();
    expect(new RoutePattern('*').match('OPTIONS', '*')).toEqual({ '*': '' });
  });
});

describe('requestPath', () => {
  it.each([
    ['/users/1', '/users/1'],
    ['/users/1/', '/users/1'],
    ['/', '/'],
    ['/users/1?x=/a', '/users/1'],
    ['/users/1#frag', '/users/1'],
    ['http://h/users/1', '/users/1'],
    ['HTTPS://h:443', '/'],
    ['//a///b//', '/a/b'],
    ['/%6C%6f', '/lo'],
    ['/a%2fb%25c', '/a%2Fb%25c'],
    ['/caf%C3%A9', '/café'],
    ['/bad%ZZ%C3', '/bad%ZZ%C3'],
    ['/%E2%84%AA', '/\u212A'],
    ['*', ''],
    ['no-scheme://x/a', '/a'],
    ['abc/def', ''],
  ])('reads %j as %j', (url, path) => {
    expect(requestPath(url)).toBe(path);
  });

  it('gives back the very string for a plain path (no allocation)', () => {
    const url = '/users/1';
    expect(requestPath(url)).toBe(url);
  });
});

describe('foldCase', () => {
  it('lowers letters, and gives back the very string when there is nothing to lower', () => {
    expect(foldCase('/LoGiN')).toBe('/login');
    const plain = '/login';
    expect(foldCase(plain)).toBe(plain);
  });
});

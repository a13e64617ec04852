import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type FileRuleSource } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { dashboard, type Dashboard, type DashboardOptions } from '@floodgate/dashboard';
import { nextFileLoad } from '../../http/every-route';
import { sendRaw } from '../../http/raw-client';

/**
 * The "done when" for the dashboard, on one framework: an app with every route under
 * guard and no rule in code, the dashboard mounted on the same app, and rules sent one at a time
 * through the HTTP API the page's forms use (`api/rules/loaded/<kind>`, on the version read from
 * `api/rules/loaded`) limiting a route per client address (connections from 127.0.0.2 and
 * 127.0.0.3) and per header value as soon as they are answered; through a file store, on another
 * instance following the file once it has loaded the file's new version (its `rulesLoaded`
 * event, never a real-time bound). Time is a ManualClock: no limit refills.
 */

const TOKEN = 'a-token-for-tests';
const auth = { authorization: `Bearer ${TOKEN}` };
const A = '127.0.0.2';
const B = '127.0.0.3';

/** An app of one framework: `GET /users/:id` under guard by the every-route option, the dashboard mounted at `/fg`. */
export interface EditedApp {
  /** The server, not yet listening. */
  readonly server: Server;
  close(): Promise<void>;
}

/** Builds the app on `fg` with `dash` mounted at `/fg`. */
export type StartApp = (fg: Floodgate, dash: Dashboard) => Promise<EditedApp>;

export function runEveryRouteEdits(name: string, resource: string, start: StartApp): void {
  describe(`${name}: every route under guard, rules added through the dashboard's API`, () => {
    let fg: Floodgate;
    let dash: Dashboard;
    let app: EditedApp;
    let server: Server;
    const cleanups: (() => unknown)[] = [];

    async function startWith(options: Partial<DashboardOptions> = {}): Promise<void> {
      dash = dashboard(fg, { token: TOKEN, editsPerSecond: 1000, ...options });
      app = await start(fg, dash);
      server = app.server;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    }

    beforeEach(() => {
      fg = new Floodgate({ clock: new ManualClock(10_000) });
    });

    afterEach(async () => {
      await app?.close();
      dash?.close();
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    const get = (path: string, from: string, headers: Record<string, string> = {}) =>
      sendRaw(server, 'GET', path, headers, from);

    async function version(): Promise<string> {
      const answer = await request(server).get('/fg/api/rules/loaded').expect(200);
      return (answer.headers.etag as string).replace(/"/g, '');
    }

    /** Sends one rule edit as the page's form does; resolves with the answer's body. */
    async function edit(method: 'post' | 'put' | 'delete', path: string, rule?: object): Promise<any> {
      const url = `/fg/api/rules/loaded/${path}?version=${await version()}`;
      const agent = request(server);
      const call = (method === 'post' ? agent.post(url) : method === 'put' ? agent.put(url) : agent.delete(url)).set(
        auth,
      );
      const answer = await (rule === undefined ? call : call.send(rule));
      expect([answer.status, answer.body.message]).toEqual([200, expect.stringMatching(/^Rule \w+ through /)]);
      return answer.body;
    }

    it('limits a route per client address once the rule is added, and no more once it is deleted', async () => {
      await startWith();
      expect(await get('/users/1', A)).toBe(200);
      await edit('post', 'hotParams', { resource, key: { from: 'ip' }, threshold: 2 });
      expect([await get('/users/1', A), await get('/users/2', A), await get('/users/3', A)]).toEqual([200, 200, 429]);
      expect(await get('/users/1', B)).toBe(200);
      await edit('delete', 'hotParams/0');
      expect(await get('/users/4', A)).toBe(200);
    });

    it('limits a route per header value, and the limit replaced in place holds at once', async () => {
      await startWith();
      const added = await edit('post', 'hotParams', {
        resource,
        key: { from: 'header', name: 'x-api-key' },
        threshold: 1,
      });
      expect(added).toMatchObject({ kind: 'hotParams', index: 0 });
      const key = (value: string) => ({ 'x-api-key': value });
      expect([await get('/users/1', A, key('k1')), await get('/users/1', B, key('k1'))]).toEqual([200, 429]);
      expect(await get('/users/1', A, key('k2'))).toBe(200);
      await edit('put', 'hotParams/0', { resource, key: { from: 'header', name: 'x-api-key' }, threshold: 3 });
      expect([await get('/users/1', A, key('k1')), await get('/users/1', A, key('k1'))]).toEqual([200, 200]);
      expect([await get('/users/1', A, key('k1')), await get('/users/1', A, key('k1'))]).toEqual([200, 429]);
    });

    it('writes the rule through a file store, in force here when answered and on an instance following the file once it loads it', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'floodgate-every-route-edits-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'rules.json');
      const store: FileRuleSource = fileRuleSource(fg, file, { debounceMs: 10 });
      const other = new Floodgate({ clock: new ManualClock(10_000) });
      const follower = fileRuleSource(other, file, { debounceMs: 10 });
      cleanups.push(
        () => store.close(),
        () => follower.close(),
      );
      await startWith({ store });
      const followed = nextFileLoad(other);
      const answer = await edit('post', 'hotParams', { resource, key: { from: 'ip' }, threshold: 1 });
      expect(answer.via).toBe('file');
      expect([await get('/users/1', A), await get('/users/1', A), await get('/users/1', B)]).toEqual([200, 429, 200]);
      await followed;
      expect(other.getRules().hotParams).toEqual([
        expect.objectContaining({ resource, key: { from: 'ip', ipv6Subnet: 56 } }),
      ]);
    });
  });
}

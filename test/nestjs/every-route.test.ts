import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Get, Param, Post } from '@nestjs/common';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type FileRuleSource, type RuleSetOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { FloodgateModule } from '@floodgate/nestjs';
import { nextFileLoad } from '../http/every-route';
import { sendRaw } from '../http/raw-client';
import { PLATFORMS, startNest, type NestHarness } from './nest-harness';

/**
 * NestJS guards every handler (the module's global interceptor): with no rule in code, rules
 * written to a real file that `fileRuleSource` watches limit a handler per client address and
 * per header value, waited for by their `rulesLoaded` event; an API group shares one budget
 * across its handlers. Time is a ManualClock.
 */

const A = '127.0.0.2';
const B = '127.0.0.3';

@Controller()
class ShopController {
  @Get('users/:id')
  user(@Param('id') id: string) {
    return { id };
  }

  @Post('cart/:item')
  cart() {
    return { ok: true };
  }

  @Post('orders')
  order() {
    return { ok: true };
  }
}

describe.each(PLATFORMS)('NestJS on %s: every handler a resource, rules from a watched file', (platform) => {
  let clock: ManualClock;
  let fg: Floodgate;
  let nest: NestHarness;
  let dir: string;
  let file: string;
  let source: FileRuleSource;

  beforeEach(async () => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
    dir = mkdtempSync(join(tmpdir(), 'floodgate-nest-every-route-'));
    file = join(dir, 'rules.json');
    source = fileRuleSource(fg, file, { debounceMs: 10 });
    nest = await startNest(platform, {
      imports: [FloodgateModule.forRoot({ floodgate: fg })],
      controllers: [ShopController],
    });
    await new Promise<void>((resolve) => nest.server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    source.close();
    await nest.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function writeRules(rules: RuleSetOptions): Promise<void> {
    const loaded = nextFileLoad(fg);
    writeFileSync(file, JSON.stringify(rules));
    await loaded;
  }

  const get = (path: string, headers: Record<string, string> = {}, from = A) =>
    sendRaw(nest.server, 'GET', path, headers, from);

  it('limits a handler per client address and per header value once rules are written to the file', async () => {
    expect(await get('/users/1')).toBe(200);
    await writeRules({
      hotParams: [
        { resource: 'ShopController.user', key: { from: 'ip' }, threshold: 2 },
        { resource: 'ShopController.user', key: { from: 'header', name: 'x-api-key' }, threshold: 1 },
      ],
    });
    expect(await get('/users/1', { 'x-api-key': 'k1' })).toBe(200);
    expect(await get('/users/2', { 'X-API-KEY': 'k1' })).toBe(429);
    expect(await get('/users/3', { 'x-api-key': 'k2' })).toBe(200);
    expect(await get('/users/4', { 'x-api-key': 'k3' })).toBe(429);
    expect(await get('/users/4', { 'x-api-key': 'k4', 'X-Forwarded-For': '198.51.100.7' })).toBe(429);
    expect(await get('/users/5', { 'x-api-key': 'k5' }, B)).toBe(200);
    await clock.advance(1001);
    expect(await get('/users/1', { 'x-api-key': 'k1' })).toBe(200);
  });

  it('shares one budget across an API group loaded from the file', async () => {
    await writeRules({
      apiGroups: [{ name: 'checkout', patterns: ['POST /cart/*', 'POST /orders'] }],
      flow: [{ resource: 'checkout', threshold: 2 }],
    });
    const post = (path: string) => sendRaw(nest.server, 'POST', path, {}, A);
    expect([await post('/cart/a'), await post('/orders'), await post('/cart/b')]).toEqual([201, 201, 429]);
    expect(await get('/users/1')).toBe(200);
  });
});

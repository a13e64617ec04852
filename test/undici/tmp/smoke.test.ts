import { Floodgate, ManualClock, isBlockError } from '@floodgate/core';
import { floodgateInterceptor } from '@floodgate/undici';
import { Agent, request } from 'undici';
import { Upstream } from '../upstream';

it('smoke', async () => {
  const up = await Upstream.start();
  const clock = new ManualClock();
  const fg = new Floodgate({ clock, random: () => 0 });
  const agent = new Agent().compose(
    floodgateInterceptor({
      floodgate: fg,
      circuitBreaker: { strategy: 'errorCount', threshold: 2, minRequestAmount: 1, retryTimeoutMs: 1000 },
    }),
  );
  up.then({ status: 503 }, { status: 200, body: 'second' });
  const res = await request(`${up.origin}/a`, { dispatcher: agent });
  console.log(res.statusCode, await res.body.text(), up.hits, fg.stats(up.host));
  up.always({ status: 500 });
  for (let i = 0; i < 3; i++) {
    try {
      const r = await request(`${up.origin}/b`, { dispatcher: agent });
      console.log('got', r.statusCode, await r.body.text());
    } catch (e) {
      console.log('err', isBlockError(e), (e as Error).message);
    }
  }
  console.log(up.hits, fg.circuitState(up.host)[0]!.state);
  globalThis.fetch;
  const { setGlobalDispatcher, getGlobalDispatcher } = require('undici');
  const prev = getGlobalDispatcher();
  setGlobalDispatcher(agent);
  try {
    await fetch(`${up.origin}/c`);
  } catch (e) {
    console.log('fetch err', (e as Error).message, isBlockError((e as Error).cause));
  }
  setGlobalDispatcher(prev);
  await (agent as unknown as Agent).close();
  await up.close();
});

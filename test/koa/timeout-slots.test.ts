import { runTimeoutSlots } from '../http/timeout-slots';
import { koaHarness } from './koa-harness';

runTimeoutSlots(koaHarness);

import { runSlowClients } from '../http/slow-clients';
import { koaHarness } from './koa-harness';

runSlowClients(koaHarness);

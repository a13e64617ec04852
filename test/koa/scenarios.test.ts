import { runScenarios } from '../http/scenarios';
import { koaHarness } from './koa-harness';

runScenarios(koaHarness);

import { runScenarios } from '../http/scenarios';
import { expressHarness } from './express-harness';

runScenarios(expressHarness);

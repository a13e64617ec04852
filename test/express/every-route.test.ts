import { runEveryRoute } from '../http/every-route';
import { expressHarness } from './express-harness';

runEveryRoute(expressHarness);

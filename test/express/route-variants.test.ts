import { runRouteVariants } from '../http/route-variants';
import { expressHarness } from './express-harness';

runRouteVariants(expressHarness);

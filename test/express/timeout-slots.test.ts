import { runTimeoutSlots } from '../http/timeout-slots';
import { expressHarness } from './express-harness';

runTimeoutSlots(expressHarness);

import { runSlowClients } from '../http/slow-clients';
import { expressHarness } from './express-harness';

runSlowClients(expressHarness);

#!/usr/bin/env node
// The public API reports (API Extractor): one per entry point of each package that has an
// api-extractor.<entry>.json, written to <package>/api/. `npm test` checks them (a change to the
// public surface fails until its report is updated and committed); `--update` rewrites them.
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const update = process.argv.includes('--update');
const root = join(import.meta.dirname, '..');
let failed = 0;
for (const pkg of readdirSync(join(root, 'packages'))) {
  const dir = join(root, 'packages', pkg);
  if (!existsSync(dir)) continue;
  for (const file of readdirSync(dir).filter((f) => /^api-extractor\..+\.json$/.test(f))) {
    const config = ExtractorConfig.loadFileAndPrepare(join(dir, file));
    const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false, messageCallback: quiet });
    if (!result.succeeded) {
      failed++;
      console.error(
        `${pkg}/${file}: the public API changed (${result.errorCount} errors); run \`npm run api -- --update\` and commit packages/${pkg}/api/`,
      );
    } else if (result.apiReportChanged) {
      console.log(`${pkg}/${file}: report updated`);
    }
  }
}
if (failed > 0) process.exit(1);
console.log(update ? 'API reports updated.' : 'API reports match the public API.');

/** Only what matters: errors, and the report-changed notice. Forgotten exports are in the reports. */
function quiet(message) {
  message.handled = message.logLevel !== 'error';
}

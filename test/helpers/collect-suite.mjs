// Collects every test file of the suite (vitest.config.ts, all three projects) as `vitest list` does, runs no test,
// and prints one JSON line: each file with its project, its load errors and its tests (how many, how many skipped).
// Used by test/integration/suite-collect.test.ts in a child process with none of the e2e prerequisites.
// (One module graph per worker, as the unit tier already runs: collecting 270 files each in a fresh one costs
// minutes of CPU on 2 cores, and nothing is run that could leave state behind for the next file.)
import { createVitest } from 'vitest/node';

const ctx = await createVitest('test', { watch: false, run: true, isolate: false, reporters: [] });
let out;
try {
  const { testModules, unhandledErrors } = await ctx.collect();
  const message = (e) => String(e?.stack ?? e?.message ?? e);
  out = {
    files: testModules.map((m) => {
      const tests = [...m.children.allTests()];
      return {
        file: m.moduleId,
        project: m.project.name,
        errors: [...m.errors(), ...[...m.children.allSuites()].flatMap((s) => s.errors())].map(message),
        tests: tests.length,
        skipped: tests.filter((t) => t.result().state === 'skipped').length,
      };
    }),
    unhandled: unhandledErrors.map(message),
  };
} finally {
  await ctx.close();
}
process.stdout.write(`${JSON.stringify(out)}\n`);

// Loaded with `node --import` into a measured process: at exit it reports its own CPU time and peak RSS.
import { writeSync } from 'node:fs';

const fd = Number(process.env.OPSCTL_BENCH_FD ?? 3);
process.on('exit', () => {
  const cpu = process.cpuUsage();
  const usage = process.resourceUsage();
  try {
    writeSync(fd, `${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, maxRssKb: usage.maxRSS })}\n`);
  } catch {
    // no report channel: nothing to do
  }
});

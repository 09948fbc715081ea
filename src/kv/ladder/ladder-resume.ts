/** What a ladder's resume finds and says: the hops done and left, and inside the hop in flight its members (from its journal). */
import { isResumable, journalPath } from '../journal/journal.js';
import { describeResume, resumeState, type ResumeState } from '../journal/resume-state.js';
import { readJournal } from '../journal/read.js';
import { hopName, type Hop } from './plan.js';
import { ladderPath, type LadderFile, type LadderOptions, type LadderResume } from './record.js';

/** What a ladder's resume finds: the hops done and left, and inside the hop in flight its members (from its journal). */
export function ladderResume(o: Pick<LadderOptions, 'dataDir' | 'cluster'>, lf: LadderFile, hops: Hop[], at: number): { state: LadderResume; text: string[] } {
  const cur = hops[at];
  const file = journalPath(o.dataDir, o.cluster.key);
  let members: ResumeState | undefined;
  try {
    const j = readJournal(file);
    if (cur && isResumable(j) && j.target === cur.to && j.createdAt >= lf.createdAt) members = resumeState(j, file);
  } catch {
    // (the executor names a journal it cannot use when it starts the hop)
  }
  const stopped =
    lf.status === 'halted'
      ? `halted at hop ${lf.halt?.hop ?? '?'}: ${lf.halt?.reason ?? ''}`
      : lf.status === 'interrupted'
        ? 'interrupted'
        : `the last run${lf.owner ? ` (pid ${lf.owner.pid} on ${lf.owner.host})` : ''} ended without a word: kill -9, a crash or a power loss`;
  const state: LadderResume = {
    ladderFile: ladderPath(o.dataDir, o.cluster.key),
    stopped: members?.stopped.how ?? stopped,
    hopsDone: hops.slice(0, at).map(hopName),
    hop: cur ? hopName(cur) : '',
    ...(members ? { members } : {}),
    hopsLeft: hops.slice(at + 1).map(hopName),
  };
  const text = [
    `Resuming the ladder recorded in ${state.ladderFile}: ${state.stopped} (last record ${members?.stopped.at ?? lf.updatedAt})`,
    `  hops done: ${state.hopsDone.join(', ') || 'none yet'}`,
    `  hop in flight: ${state.hop}${members ? '' : ' (no member of it touched yet)'}`,
    ...(members ? describeResume(members, cur!.to, '    ').slice(1) : []),
    `  hops left: ${state.hopsLeft.join(', ') || 'none after this one'}`,
  ];
  return { state, text };
}

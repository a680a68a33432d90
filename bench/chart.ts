/**
 * Draws the benchmark's figures (SVG rendered to PNG by the same Chromium the browser tests use): every figure
 * that has a floor is drawn next to it (grey: the floor, blue: this runtime) with its goal as a red line, so the
 * chart answers "how far from the floor, and is the goal met" at a glance.
 */
import { launchBrowser } from '../test/helpers/browser';

interface Report {
  at: string;
  [key: string]: unknown;
}

/** One figure: this runtime's value, the floor's (if any) and the goal, in one unit. */
interface Row {
  label: string;
  value: number;
  floor?: number;
  goal?: number;
  unit: string;
  /** For rates: more is better, so the goal is a minimum. */
  higherIsBetter?: boolean;
}

const WIDTH = 980;
const LABEL = 300;
const BAR_AREA = WIDTH - LABEL - 150;

function section(title: string, rows: Row[], y: number): { svg: string; height: number } {
  const parts = [`<text x="20" y="${y + 16}" font-size="15" font-weight="bold">${title}</text>`];
  let top = y + 30;
  for (const row of rows) {
    const max = Math.max(row.value, row.floor ?? 0, row.goal ?? 0, 1e-9) * 1.05;
    const scale = (v: number) => Math.max(2, (BAR_AREA * v) / max);
    const met =
      row.goal === undefined ? undefined : row.higherIsBetter ? row.value >= row.goal : row.value <= row.goal;
    const verdict = met === undefined ? '' : met ? ' ✓ goal met' : ' ✗ goal not met';
    parts.push(`<text x="20" y="${top + 14}" font-size="13">${row.label}</text>`);
    let barTop = top;
    if (row.floor !== undefined) {
      parts.push(
        `<rect x="${LABEL}" y="${barTop}" width="${scale(row.floor)}" height="14" fill="#9aa3ad"/>`,
        `<text x="${LABEL + scale(row.floor) + 6}" y="${barTop + 12}" font-size="11">floor ${row.floor} ${row.unit}</text>`,
      );
      barTop += 17;
    }
    parts.push(
      `<rect x="${LABEL}" y="${barTop}" width="${scale(row.value)}" height="14" fill="#3b6fd8"/>`,
      `<text x="${LABEL + scale(row.value) + 6}" y="${barTop + 12}" font-size="11">${row.value} ${row.unit}${verdict}</text>`,
    );
    const bottom = barTop + 14;
    if (row.goal !== undefined)
      parts.push(
        `<line x1="${LABEL + scale(row.goal)}" x2="${LABEL + scale(row.goal)}" y1="${top - 3}" y2="${bottom + 3}" stroke="#d33" stroke-width="2" stroke-dasharray="4 2"/>`,
        `<text x="${LABEL + scale(row.goal) + 3}" y="${top - 4}" font-size="10" fill="#d33">goal ${row.goal}</text>`,
      );
    top = bottom + 22;
  }
  return { svg: parts.join('\n'), height: top - y + 6 };
}

type Stat = { p50: number; p99: number };
type Memory = {
  bare: { heapKiB: number };
  session: { heapKiB: number };
  sessionUnshared: { heapKiB: number };
  /** Absent from reports before 2026-11-26's afternoon. */
  compacted?: { bare: { rssKiB: number }; session: { rssKiB: number } };
};
type Parked = { kind: string; parked: number; resumesPerSecond: number; rssMiB: number };
type Recovery = Record<string, { startMs: Stat; clickAfterPollMs: Stat }> & { bundleBuildMs?: number };

/** The rows, from whatever sections this report has. */
export function chartRows(report: Report): [string, Row[]][] {
  const r = report as Record<string, unknown>;
  const sections: [string, Row[]][] = [];
  const floor = r.floorMessage as { bare: Stat; session: Stat } | undefined;
  const latency: Row[] = [];
  if (floor)
    latency.push({
      label: 'message → answer (p50)',
      value: floor.session.p50,
      floor: floor.bare.p50,
      goal: Number((floor.bare.p50 * 1.5).toFixed(1)),
      unit: 'ms',
    });
  const viaGateway = r.clickToResumeGateway as Stat | undefined;
  const bareSignal = r.clickToResumeBareSignal as Stat | undefined;
  if (viaGateway && bareSignal)
    latency.push({
      label: 'click via gateway → tool ran (p50)',
      value: viaGateway.p50,
      floor: bareSignal.p50,
      goal: Number((bareSignal.p50 * 1.25).toFixed(1)),
      unit: 'ms',
    });
  const ackUp = r.ackWorkerUp as Stat | undefined;
  if (ackUp)
    latency.push({ label: 'click acknowledged, worker up (p99)', value: ackUp.p99, goal: 100, unit: 'ms' });
  if (latency.length) sections.push(['Latency', latency]);

  const memory = r.memory as Memory | undefined;
  if (memory)
    sections.push([
      'Memory per cached workflow',
      [
        {
          label: 'session, V8 heap',
          value: memory.session.heapKiB,
          floor: memory.bare.heapKiB,
          goal: Math.min(1024, Math.round(memory.bare.heapKiB * 2.5)),
          unit: 'KiB',
        },
        ...(memory.compacted
          ? [
              {
                label: 'session, resident (heap compacted)',
                value: memory.compacted.session.rssKiB,
                floor: memory.compacted.bare.rssKiB,
                goal: Math.min(1024, Math.round(memory.compacted.bare.rssKiB * 2.5)),
                unit: 'KiB',
              },
            ]
          : []),
        {
          label: 'session, heap, nothing shared (before)',
          value: memory.sessionUnshared.heapKiB,
          unit: 'KiB',
        },
      ],
    ]);

  const parked = (r.parked ?? []) as Parked[];
  const counts = [...new Set(parked.map((p) => p.parked))];
  const rates: Row[] = counts.flatMap((count) => {
    // The goal is against the fair floor (the same durable steps as a session's resume), the bare one without it.
    const floor =
      parked.find((p) => p.parked === count && p.kind === 'fair') ??
      parked.find((p) => p.parked === count && p.kind === 'bare');
    return [
      ['session', 'approved command'],
      ['session-question', 'answered question'],
    ].flatMap(([kind, what]) => {
      const session = parked.find((p) => p.parked === count && p.kind === kind);
      if (!session) return [];
      return [
        {
          label: `${count} parked, ${what}: resumes`,
          value: session.resumesPerSecond,
          ...(floor
            ? { floor: floor.resumesPerSecond, goal: Number((floor.resumesPerSecond * 0.9).toFixed(1)) }
            : {}),
          unit: '/s',
          higherIsBetter: true,
        },
      ];
    });
  });
  // The worker's share of one resume, measured alone: diagnostic, so a floor and no goal of its own.
  const replay = r.replay as { bare: { cpuMs: number }; session: { cpuMs: number } } | undefined;
  if (replay)
    rates.push({
      label: 'one replay of a parked session: CPU',
      value: replay.session.cpuMs,
      floor: replay.bare.cpuMs,
      unit: 'ms',
    });
  if (rates.length) sections.push(['Parked workflows (worker cache 500)', rates]);

  const recovery = r.recovery as Recovery | undefined;
  // The start as production runs it (compiled JavaScript), when this run measured it.
  const sticky = recovery?.['sticky 1s compiled'] ?? recovery?.['sticky 1s'];
  if (sticky)
    sections.push([
      'Recovery after a crash',
      [
        { label: 'new worker start → polling (p50)', value: sticky.startMs.p50, goal: 2000, unit: 'ms' },
        {
          label: 'polling → click made while down ran (p50)',
          value: sticky.clickAfterPollMs.p50,
          goal: 1500,
          unit: 'ms',
        },
      ],
    ]);
  const tabs = r.idleTabs as { tabs: number; queriesPerSecond: number } | undefined;
  if (tabs)
    sections.push([
      'Open web tabs on idle sessions',
      [
        {
          label: `${tabs.tabs} tabs: queries/s`,
          value: tabs.queriesPerSecond,
          floor: 0,
          goal: 0,
          unit: '/s',
        },
      ],
    ]);
  return sections;
}

export async function drawChart(report: Report, file: string): Promise<string> {
  let y = 44;
  const parts: string[] = [];
  for (const [title, rows] of chartRows(report)) {
    const drawn = section(title, rows, y);
    parts.push(drawn.svg);
    y += drawn.height + 10;
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y + 10}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="20" y="26" font-size="17" font-weight="bold">npm run bench, ${report.at}: grey floor, blue this runtime, red dashed goal</text>
${parts.join('\n')}
</svg>`;
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: y + 10 } });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.screenshot({ path: file });
  } finally {
    await browser.close();
  }
  return file;
}

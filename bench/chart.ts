/** Draws the benchmark's figures as bar charts (SVG rendered to PNG by the same Chromium the browser tests use). */
import { launchBrowser } from '../test/helpers/browser';

interface Report {
  at: string;
  [key: string]: unknown;
}

interface Bar {
  label: string;
  value: number;
  unit: string;
}

function bars(title: string, items: Bar[], x: number, y: number, width: number): string {
  const max = Math.max(...items.map((b) => b.value), 1);
  const rows = items
    .map((b, i) => {
      const top = y + 34 + i * 34;
      const w = Math.max(2, ((width - 300) * b.value) / max);
      return `<text x="${x}" y="${top + 16}" font-size="13">${b.label}</text>
<rect x="${x + 230}" y="${top + 3}" width="${w}" height="18" fill="#3b6fd8"/>
<text x="${x + 236 + w}" y="${top + 16}" font-size="12">${b.value} ${b.unit}</text>`;
    })
    .join('\n');
  return `<text x="${x}" y="${y + 16}" font-size="15" font-weight="bold">${title}</text>\n${rows}`;
}

export async function drawChart(report: Report, file: string): Promise<string> {
  const r = report as Record<string, { p50: number; p99: number } | undefined> & Report;
  const stat = (key: string) => (r[key] as { p50: number; p99: number } | undefined) ?? { p50: 0, p99: 0 };
  const latency: Bar[] = [
    { label: 'message -> answer (p50)', value: stat('plainMessage').p50, unit: 'ms' },
    { label: 'click via gateway (p50)', value: stat('clickToResumeGateway').p50, unit: 'ms' },
    { label: 'bare signal (p50)', value: stat('clickToResumeBareSignal').p50, unit: 'ms' },
    { label: 'ack, worker up (p99)', value: stat('ackWorkerUp').p99, unit: 'ms' },
    { label: 'ack, worker down (p99)', value: stat('ackWorkerDown').p99, unit: 'ms' },
  ];
  const resume = (report.resumeAfterRestartMs ?? {}) as Record<string, number>;
  const restart: Bar[] = Object.entries(resume).map(([turns, ms]) => ({
    label: `${turns}-turn session`,
    value: ms,
    unit: 'ms',
  }));
  const parked = (report.parked ?? []) as { sessions: number; rssMiB: number; resumesPerSecond: number }[];
  const memory: Bar[] = parked.map((p) => ({
    label: `${p.sessions} parked: RSS`,
    value: p.rssMiB,
    unit: 'MiB',
  }));
  const rate: Bar[] = parked.map((p) => ({
    label: `${p.sessions} parked: resumes`,
    value: p.resumesPerSecond,
    unit: '/s',
  }));
  let y = 50;
  const parts: string[] = [];
  for (const [title, items] of [
    ['Latency (ms)', latency],
    ['Resume after a worker restart', restart],
    ['Worker memory with parked sessions', memory],
    ['Resolving parked sessions', rate],
  ] as const) {
    if (!items.length) continue;
    parts.push(bars(title, items, 20, y, 900));
    y += 50 + items.length * 34;
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="940" height="${y + 10}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="20" y="28" font-size="17" font-weight="bold">Durable agent runtime — npm run bench, ${report.at}</text>
${parts.join('\n')}
</svg>`;
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 940, height: y + 10 } });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.screenshot({ path: file });
  } finally {
    await browser.close();
  }
  return file;
}

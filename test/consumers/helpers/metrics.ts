/** Scrapes a metrics endpoint over HTTP and reads one series' value. */
export async function scrapeMetrics(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`GET ${url}/metrics answered ${response.status}`);
  return response.text();
}

/** Sum of the samples of `name` whose labels include every label given. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const wanted = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`));
    if (wanted) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { needs } from '../support/system-binaries.js';
import type { SamplesResult } from '../../playground/api.js';
import { buildAssets } from '../../playground/assets.js';
import { startPlaygroundServer, type PlaygroundServer } from '../../playground/server.js';

/**
 * The playground in Debian's chromium: one browser and one server for the whole file. Each view
 * is saved as a screenshot under test-artifacts/playground/.
 */
const ARTIFACTS = join('test-artifacts', 'playground');
const chromiumProgram = needs('chromium');
const dir = mkdtempSync(join(tmpdir(), 'rivulet-playground-browser-'));
let server: PlaygroundServer;
let browser: Browser;
let page: Page;
/** `POST /api/run` requests that reached the server. */
let runPosts = 0;

beforeAll(async () => {
  if (chromiumProgram.skip) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  const [assets, launched] = await Promise.all([buildAssets(), launchChromium()]);
  browser = launched;
  server = await startPlaygroundServer({ port: 0, assets, databaseDir: dir });
  server.server.on('request', (req) => {
    if (req.method === 'POST' && req.url === '/api/run') runPosts++;
  });
  page = await browser.newPage({ viewport: { width: 1440, height: 960 } });
  // Collected before any script of the page runs, so every breach of its policy is seen.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runs(p: Page): Promise<number> {
  return Number((await p.getAttribute('body', 'data-runs')) ?? '0');
}

/** Does `action` and waits until the page has finished one more run. */
async function afterRun(p: Page, action: () => Promise<unknown>): Promise<void> {
  const before = await runs(p);
  await action();
  await p.waitForFunction((n) => Number(document.body.dataset.runs ?? '0') > n, before);
}

function editorText(p: Page, editor: string): Promise<string> {
  return p.$$eval(`${editor} .cm-line`, (lines) => lines.map((l) => l.textContent ?? '').join('\n'));
}

/** Replaces an editor's whole text the way a paste does. */
async function replaceEditorText(p: Page, editor: string, text: string): Promise<void> {
  await p.click(`${editor} .cm-content`);
  await p.keyboard.press('Control+A');
  await p.keyboard.insertText(text);
}

function outputRows(p: Page): Promise<string[][]> {
  return p.$$eval('#output tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')));
}

const shot = (p: Page, name: string) => p.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

/** A share link as the page's Share button writes it: deflated JSON in base64url after `#s=`. */
function shareLink(state: { config: string; input: string }): string {
  const json = JSON.stringify({ v: 1, ...state, inputFormat: 'text', now: '2024-05-01T00:00:00Z' });
  return `${server.url}/#s=${deflateRawSync(Buffer.from(json)).toString('base64url')}`;
}

/** A page on another origin: a server on another port of 127.0.0.1 with `html` as its page. */
async function otherSite(html: string): Promise<{ url: string; close: () => Promise<void> }> {
  const site: Server = createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(html);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(site.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => site.close(() => resolve())),
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(chromiumProgram.skip)(chromiumProgram.title('the playground in a browser'), () => {
  it('opens on the first sample, already run', async () => {
    expect(await page.inputValue('#sample')).toBe('kubernetes');
    const rows = await outputRows(page);
    expect(rows.map((r) => [r[0], r[3]])).toEqual([
      ['1', 'cart created'],
      ['2', 'payment declined'],
      ['3', 'query served'],
      ['4', 'plain text line from a sidecar'],
      ['dropped', '{"level":"debug","msg":"cache lookup","trace_id":"4bf92f35"}'],
    ]);
    await shot(page, '01-sample');
  });

  it('fits at least 15 compact output rows on screen, long cells cut short with their text on hover', async () => {
    const { samples } = (await (await fetch(`${server.url}/api/samples`)).json()) as SamplesResult;
    const kubernetes = samples.find((s) => s.id === 'kubernetes')!;
    const longLine = `plain text from a sidecar ${'with a very long tail '.repeat(20)}end`;
    const long = JSON.stringify({ labels: { namespace: 'shop', app: 'search' }, timestamp: '2024-05-01T12:00:03Z', line: longLine });
    const input = `${kubernetes.input.trimEnd()}\n`.repeat(4) + long;
    await replaceEditorText(page, '#input-editor', input);
    await afterRun(page, () => page.keyboard.press('Control+Enter'));
    await page.evaluate(() => window.scrollTo(0, 0));

    const rows = await outputRows(page);
    expect(rows).toHaveLength(21);
    const visible = await page.$$eval('#output tbody tr', (trs) => {
      const wrap = document.querySelector('.table-wrap')!.getBoundingClientRect();
      const bottom = Math.min(wrap.bottom, window.innerHeight);
      return trs.filter((tr) => {
        const box = tr.getBoundingClientRect();
        return box.top >= wrap.top && box.bottom <= bottom;
      }).length;
    });
    expect(visible).toBeGreaterThanOrEqual(15);

    const cut = (selector: string) =>
      page.$eval(selector, (td) => ({ cut: td.scrollWidth > td.clientWidth, title: td.getAttribute('title'), height: td.clientHeight }));
    const lineCell = await cut('#output tbody tr[data-output="16"] td.line');
    expect(lineCell).toMatchObject({ cut: true, title: longLine });
    expect(lineCell.height).toBeLessThan(30);
    expect(await cut('#output tbody tr[data-output="0"] td.labels')).toMatchObject({
      cut: true,
      title: 'app=checkout\nlevel=info\nnamespace=shop\npod=checkout-7d9f',
    });
    expect(rows[0]![1]).toBe('12:00:00.000000000');
    await shot(page, '07-compact');
  });

  it('shows a sample as edited once its config, input or options differ, and as the sample again when undone', async () => {
    await afterRun(page, () => page.selectOption('#sample', 'docker'));
    const description = await page.textContent('#sample-description');
    expect(description).not.toBe('');
    const menu = () =>
      page.$eval('#sample', (select) => [
        (select as HTMLSelectElement).value,
        (select as HTMLSelectElement).selectedOptions[0]!.textContent,
      ]);
    expect(await menu()).toEqual(['docker', 'Docker JSON logs']);
    const edited = 'Edited: no longer the “Docker JSON logs” sample. Pick a sample to start again from it.';

    await page.click('#config-editor .cm-content');
    await page.keyboard.press('Control+End');
    await afterRun(page, () => page.keyboard.insertText('\n'));
    expect([await menu(), await page.textContent('#sample-description')]).toEqual([['', 'Custom'], edited]);
    await shot(page, '08-custom');
    await afterRun(page, () => page.keyboard.press('Backspace'));
    expect([await menu(), await page.textContent('#sample-description')]).toEqual([['docker', 'Docker JSON logs'], description]);

    await page.click('#input-editor .cm-content');
    await page.keyboard.press('Control+End');
    await afterRun(page, () => page.keyboard.insertText('x'));
    expect(await menu()).toEqual(['', 'Custom']);
    await afterRun(page, () => page.keyboard.press('Backspace'));
    expect(await menu()).toEqual(['docker', 'Docker JSON logs']);

    const now = await page.inputValue('#now');
    await page.fill('#now', '2024-06-01T00:00:00Z');
    expect([await menu(), await page.textContent('#sample-description')]).toEqual([['', 'Custom'], edited]);
    await page.fill('#now', now);
    expect(await menu()).toEqual(['docker', 'Docker JSON logs']);
  });

  it('shows the input lines a joined entry was made of', async () => {
    await afterRun(page, () => page.selectOption('#sample', 'cri'));
    const badge = page.locator('#output tbody tr[data-output="1"] td.line .joined-count');
    expect([await badge.textContent(), await badge.getAttribute('title')]).toEqual(['3 lines', 'Joined from input lines 2–4']);
    expect(
      await page.$$eval('#output tbody tr.not-forwarded .badge', (badges) => badges.map((b) => [b.textContent, b.getAttribute('title')])),
    ).toEqual([
      ['joined', 'Joined by stage.cri (line 2) into output #2.'],
      ['joined', 'Joined by stage.cri (line 2) into output #2.'],
    ]);

    await page.click('#output tbody tr[data-output="1"]');
    expect(await page.textContent('#trace-title')).toBe('Output #2 · input line 4');
    expect(await page.textContent('#panel-stages .joined h4')).toBe('Joined from 3 input lines');
    expect(await page.$$eval('#panel-stages .joined li', (items) => items.map((li) => li.textContent))).toEqual([
      'Input line 2 2024-05-01T12:00:01.000000000Z stdout P {"cart":{"items":[{"sku":"A-100","qty":2},',
      'Input line 3 2024-05-01T12:00:01.000000001Z stdout P {"sku":"B-220","qty":1}],',
      'Input line 4 (this entry) 2024-05-01T12:00:01.000000002Z stdout F "total":42.5}}',
    ]);
    await shot(page, '09-joined');

    // Each piece opens its own story, which leads back to the joined entry.
    await page.click('#panel-stages .joined li button >> nth=0');
    expect(await page.textContent('#trace-title')).toBe('input line 2');
    expect(await page.textContent('#panel-stages .fate')).toBe('Joined by stage.cri (line 2) into output #2. Show output #2');
    await page.click('#panel-stages .fate button');
    expect(await page.textContent('#trace-title')).toBe('Output #2 · input line 4');

    await afterRun(page, () => page.selectOption('#sample', 'java-multiline'));
    await page.click('#output tbody tr[data-output="0"]');
    expect(await page.$$eval('#panel-stages .joined li .joined-name', (names) => names.map((n) => n.textContent))).toEqual([
      'Input line 1 (this entry)',
      'Input line 2',
      'Input line 3',
      'Input line 4',
    ]);
  });

  it('loads a sample, runs an edited stage and shows the stage-by-stage diff', async () => {
    await afterRun(page, () => page.selectOption('#sample', 'logfmt'));
    expect((await outputRows(page)).map((r) => r[2])).toEqual(['level=info', 'level=warn', 'level=info', 'level=error', '']);

    const config = await editorText(page, '#config-editor');
    const edited = config.replace('values = { level = "" }', 'values = { level = "", msg = "" }');
    expect(edited).not.toBe(config);
    await replaceEditorText(page, '#config-editor', edited);
    await afterRun(page, () => page.keyboard.press('Control+Enter'));

    const rows = await outputRows(page);
    expect(rows[0]!.slice(2, 4)).toEqual(['level=infomsg=query served', 'level=info msg="query served" took=12ms rows=20']);
    expect(rows[1]![2]).toBe('level=warnmsg=slow query');

    await page.click('#output tbody tr[data-output="1"]');
    expect(await page.textContent('#trace-title')).toBe('Output #2 · input line 3');
    const steps = await page.$$eval('#panel-stages li.step', (items) =>
      items.map((li) => ({
        head: li.querySelector('.step-head')!.textContent,
        diff: [...li.querySelectorAll('table.diff tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent).join('|')),
      })),
    );
    expect(steps).toEqual([
      {
        head: 'changedstage.logfmtline 1+0 ms',
        diff: ['+|extracted.level||warn', '+|extracted.msg||slow query', '+|extracted.duration||1.5s'],
      },
      { head: 'no changestage.dropline 5+0 ms', diff: [] },
      { head: 'changedstage.labelsline 10+0 ms', diff: ['+|labels.level||warn', '+|labels.msg||slow query'] },
      { head: 'no changestage.metricsline 14+0 ms', diff: [] },
    ]);
    await shot(page, '02-stages');
  });

  it('explains where and why a dropped entry stopped', async () => {
    await page.click('#output tbody tr.not-forwarded');
    expect(await page.textContent('#panel-stages .fate')).toBe(
      'Dropped by stage.drop (line 5): every condition held: the value of level is "debug" (counted as reason "drop_stage").',
    );
  });

  it('marks a config error at its line and column', async () => {
    const config = await editorText(page, '#config-editor');
    const broken = config.replace('  source = "level"', '  source = "level"\n  colour = "red"');
    await replaceEditorText(page, '#config-editor', broken);
    await afterRun(page, () => page.click('#run'));
    expect(await page.textContent('#problems li')).toBe('Config 7:3: stage.drop: unrecognized attribute name "colour"');
    const marker = await page.$eval('#config-editor .cm-lintRange-error', (span) => {
      const line = span.closest('.cm-line')!;
      const lines = [...document.querySelectorAll('#config-editor .cm-line')];
      const before = document.createRange();
      before.setStart(line, 0);
      before.setEnd(span, 0);
      return { line: lines.indexOf(line) + 1, col: before.toString().length + 1, text: span.textContent };
    });
    expect(marker).toEqual({ line: 7, col: 3, text: 'colour' });
    expect(await page.$$eval('#config-editor .cm-lint-marker-error', (m) => m.length)).toBe(1);
    await shot(page, '03-error');

    // The problem list jumps to the place.
    await page.click('#problems button');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('cm-content'))).toBe(true);
    await replaceEditorText(page, '#config-editor', config);
    await afterRun(page, () => page.keyboard.press('Control+Enter'));
    expect(await page.isHidden('#problems')).toBe(true);
  });

  it('offers stage completion and hover help from the registry', async () => {
    await page.click('#config-editor .cm-content');
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText('\nstage.multi');
    await page.keyboard.press('Control+Space');
    await page.waitForSelector('.cm-tooltip-autocomplete');
    expect(await page.$$eval('.cm-tooltip-autocomplete li', (items) => items.map((i) => i.textContent))).toContain('stage.multilinestage');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Z');

    const token = page.locator('#config-editor .cm-line', { hasText: 'stage.logfmt' }).locator('span', { hasText: 'stage.logfmt' });
    await token.hover();
    await page.waitForSelector('.help-card');
    expect(await page.textContent('.help-card .help-title')).toBe('stage.logfmt');
    expect(await page.textContent('.help-card .help-doc')).toBe(
      'Parses the line or an extracted value as logfmt and extracts the mapped keys.',
    );
    await page.mouse.move(5, 5);
  });

  it('shows flushes on the virtual clock and the metrics as scraped', async () => {
    await afterRun(page, () => page.selectOption('#sample', 'java-multiline'));
    await page.click('#tab-timeline');
    const timeline = await page.$$eval('#panel-timeline tbody tr', (rows) =>
      rows.map((r) => [...r.children].map((c) => c.textContent).join(' | ')),
    );
    expect(timeline).toContain('+3.003 s | stage.multiline flushed | Sent on output #1 by a timer on the virtual clock.');
    await shot(page, '04-timeline');

    await afterRun(page, () => page.selectOption('#sample', 'nginx-geoip'));
    await page.click('#tab-metrics');
    expect(await page.$$eval('#metrics .metric-custom', (lines) => lines.map((l) => l.textContent))).toContain(
      'logs_process_custom_http_requests_total{country="GB",method="GET",status="200"} 1',
    );
    await shot(page, '05-metrics');
    await page.click('#tab-stages');
  });

  it('copies the config as a complete config file', async () => {
    await afterRun(page, () => page.selectOption('#sample', 'luhn'));
    await page.click('#export');
    await page.waitForSelector('#dialog[open]');
    expect(await page.inputValue('#dialog-text')).toBe(
      'logs.process "default" {\n  stage.luhn {\n    delimiters  = " -"\n    replacement = "[card]"\n  }\n\n  // Where the processed entries go: replace with the receivers of your config.\n  forward_to = [logs.write.default.receiver]\n}\n\n// Sends the processed entries to Loki: point url at your own push endpoint.\nlogs.write "default" {\n  endpoint {\n    url = "http://localhost:3100/loki/api/v1/push"\n  }\n}\n',
    );
    await page.keyboard.press('Escape');
  });

  it('restores the whole state from a share link in a fresh page, and runs it only when asked', async () => {
    await afterRun(page, () => page.selectOption('#sample', 'retention'));
    await page.fill('#now', '2024-05-01T12:30:00Z');
    await afterRun(page, () => page.keyboard.press('Control+Enter'));
    await page.click('#share');
    await page.waitForSelector('#dialog[open]');
    const link = await page.inputValue('#dialog-text');
    expect(link).toMatch(new RegExp(`^${server.url}/#s=[A-Za-z0-9_-]+$`));
    await page.keyboard.press('Escape');

    const fresh = await browser.newPage({ viewport: { width: 1440, height: 960 } });
    // Counted on this page: the first page may still send a debounced run of its own meanwhile.
    let freshRunPosts = 0;
    fresh.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/run') freshRunPosts++;
    });
    try {
      await fresh.goto(link);
      await fresh.waitForSelector('body[data-ready="true"]');
      expect(await editorText(fresh, '#config-editor')).toBe(await editorText(page, '#config-editor'));
      expect(await editorText(fresh, '#input-editor')).toBe(await editorText(page, '#input-editor'));
      expect([await fresh.inputValue('#input-format'), await fresh.inputValue('#now'), await fresh.inputValue('#seed')]).toEqual([
        'jsonl',
        '2024-05-01T12:30:00Z',
        '7',
      ]);
      expect(await fresh.textContent('#status')).toBe('Opened from a link: read the config, then press Run');
      await pause(1000);
      expect([await runs(fresh), await outputRows(fresh), freshRunPosts]).toEqual([0, [], 0]);
      await shot(fresh, '06-shared');
      await afterRun(fresh, () => fresh.click('#run'));
      expect(await outputRows(fresh)).toEqual(await outputRows(page));
    } finally {
      await fresh.close();
    }
  });

  it('runs nothing that another site frames or opens', async () => {
    const attack = { config: 'stage.template {\n  source   = "home"\n  template = "{{ env \\"HOME\\" }}"\n}\n', input: 'x\n' };
    const link = shareLink(attack);
    const site = await otherSite(
      `<!doctype html><title>elsewhere</title><iframe id="framed" src="${link}"></iframe><button id="open" onclick="window.opened = window.open('${link}')">open</button>`,
    );
    const other = await browser.newPage();
    try {
      const postsBefore = runPosts;
      await other.goto(site.url);
      // The frame is refused (X-Frame-Options, frame-ancestors): it never holds the playground.
      const framed = other.frames().find((f) => f !== other.mainFrame())!;
      await framed.waitForLoadState();
      expect(framed.url()).toMatch(/^chrome-error:/);

      const [opened] = await Promise.all([other.context().waitForEvent('page'), other.click('#open')]);
      await opened.waitForSelector('body[data-ready="true"]');
      expect(await editorText(opened, '#config-editor')).toBe(attack.config);
      // The opener may move the window to another link (a hash change): shown again, never run.
      const second = { config: 'stage.static_labels {\n  values = { home = sys.env("HOME") }\n}\n', input: 'y\n' };
      await other.evaluate((url) => {
        (window as unknown as { opened: Window }).opened.location.href = url;
      }, shareLink(second));
      await opened.waitForFunction((text) => document.querySelector('#config-editor .cm-content')?.textContent?.includes(text), 'sys.env');
      await pause(1500);
      expect([await runs(opened), await outputRows(opened), runPosts]).toEqual([0, [], postsBefore]);
      expect(await opened.textContent('#status')).toBe('Opened from a link: read the config, then press Run');
      await opened.close();
    } finally {
      await other.close();
      await site.close();
    }
  });

  it('works within its Content-Security-Policy', async () => {
    expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
  });

  it('keeps every visible text at a contrast of at least 4.5:1 (WCAG AA)', async () => {
    const failures = await page.evaluate(() => {
      type Rgba = [number, number, number, number];
      const parse = (c: string): Rgba => {
        const m = /rgba?\(([^)]+)\)/.exec(c);
        if (!m) return [0, 0, 0, 0];
        const [r, g, b, a] = m[1]!
          .split(/[ ,/]+/)
          .filter(Boolean)
          .map(Number);
        return [r!, g!, b!, a ?? 1];
      };
      const over = (top: Rgba, below: Rgba): Rgba => [0, 1, 2].map((i) => top[i]! * top[3] + below[i]! * (1 - top[3])).concat(1) as Rgba;
      const background = (el: Element | null): Rgba => {
        if (!el) return [255, 255, 255, 1];
        const own = parse(getComputedStyle(el).backgroundColor);
        if (own[3] === 0) return background(el.parentElement);
        return own[3] >= 1 ? own : over(own, background(el.parentElement));
      };
      const luminance = (c: Rgba) => {
        const [r, g, b] = c.slice(0, 3).map((v) => {
          const s = v / 255;
          return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
      };
      const out: string[] = [];
      for (const el of document.querySelectorAll('body *')) {
        const hasText = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '');
        const box = el.getBoundingClientRect();
        if (!hasText || box.width === 0 || box.height === 0 || el.closest('[hidden], dialog:not([open])')) continue;
        const bg = background(el);
        const fg = over(parse(getComputedStyle(el).color), bg);
        const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
        const ratio = (hi! + 0.05) / (lo! + 0.05);
        if (ratio < 4.5)
          out.push(`${el.tagName.toLowerCase()}.${el.className} "${el.textContent!.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
      }
      return out;
    });
    expect(failures).toEqual([]);
  });

  it('can be driven from the keyboard with labelled controls', async () => {
    await page.focus('#sample');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('run');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('share');
    const unlabelled = await page.$$eval('input, select, textarea, [role="textbox"], .cm-content', (els) =>
      els
        .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
        .map((el) => el.outerHTML.slice(0, 60)),
    );
    expect(unlabelled).toEqual([]);
    await page.focus('#tab-stages');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => [document.activeElement?.id, document.getElementById('panel-timeline')!.hidden])).toEqual([
      'tab-timeline',
      false,
    ]);
    await page.keyboard.press('ArrowLeft');
  });
});

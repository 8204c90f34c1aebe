import { describe, expect, it } from 'vitest';
import { BudgetMeter, TIMED_OUT } from '../../../lib/template/budget.js';
import {
  DEFAULT_EXECUTION_BUDGET,
  defineFunc,
  parseTemplate,
  referenceFuncs,
  TemplateBudgetError,
  TemplateExecError,
  type ExecutionBudget,
} from '../../../lib/template/index.js';
import { type GoInt, T_INT } from '../../../lib/template/values.js';
import { render } from './render.js';

const UNTIMED = { maxDuration: Number.POSITIVE_INFINITY };

/**
 * Renders with the reference's functions and a budget on top of the defaults. These tests are
 * about steps and sizes: no time limit, which a loaded machine could reach first.
 */
function renderWithin(budget: Partial<ExecutionBudget>, template: string, data: unknown = {}): string {
  return parseTemplate(template, { name: 'tpl', funcs: referenceFuncs, budget: { ...UNTIMED, ...budget } }).execute(data);
}

/** The error a render fails with, how long it took and how much the heap grew meanwhile. */
function failure(template: string, budget?: Partial<ExecutionBudget>): { error: Error; ms: number; heapMiB: number } {
  const t = parseTemplate(template, { name: 'pipeline_template', funcs: referenceFuncs, budget: { ...UNTIMED, ...budget } });
  const heapBefore = process.memoryUsage().heapUsed;
  const start = performance.now();
  try {
    t.execute({});
  } catch (error) {
    return { error: error as Error, ms: performance.now() - start, heapMiB: (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20 };
  }
  throw new Error(`expected ${template} to fail`);
}

describe('the execution budget: runaway templates', () => {
  it('stops repeat before building its result', () => {
    const { error, ms, heapMiB } = failure('{{ repeat 200000000 "a" }}');
    expect(error).toBeInstanceOf(TemplateBudgetError);
    expect(error).toBeInstanceOf(TemplateExecError);
    expect(error.message).toBe(
      'template: pipeline_template:1:3: executing "pipeline_template" at <repeat 200000000 "a">: error calling repeat: ' +
        'execution budget exceeded: a string of 200000000 bytes (at most 16777216)',
    );
    expect(ms).toBeLessThan(100);
    expect(heapMiB).toBeLessThan(16);
  });

  it('stops until before building its list', () => {
    const { error, ms, heapMiB } = failure('{{ range until 100000000 }}{{ . }}{{ end }}');
    expect(error.message).toBe(
      'template: pipeline_template:1:9: executing "pipeline_template" at <until 100000000>: error calling until: ' +
        'execution budget exceeded: a list of 100000000 elements (at most 1000000)',
    );
    expect(ms).toBeLessThan(100);
    expect(heapMiB).toBeLessThan(16);
  });

  it('stops seq before building its span', () => {
    const { error, ms, heapMiB } = failure('{{ seq 1 100000000 }}');
    expect(error.message).toBe(
      'template: pipeline_template:1:3: executing "pipeline_template" at <seq 1 100000000>: error calling seq: ' +
        'execution budget exceeded: a list of 100000000 elements (at most 1000000)',
    );
    expect(ms).toBeLessThan(100);
    expect(heapMiB).toBeLessThan(16);
  });

  it('stops nested loops when the steps run out', () => {
    const { error, ms, heapMiB } = failure('{{ range until 10000 }}{{ range until 10000 }}{{ . }}{{ end }}{{ end }}');
    expect(error).toBeInstanceOf(TemplateBudgetError);
    expect(error.message).toBe(
      'template: pipeline_template:1:49: executing "pipeline_template" at <{{.}}>: execution budget exceeded: more than 1000000 steps',
    );
    // A few hundred milliseconds on an idle machine; the bound leaves room for a busy one.
    expect(ms).toBeLessThan(3000);
    expect(heapMiB).toBeLessThan(200);
  });

  it('stops a list that would not fit in the steps left before building it', () => {
    expect(failure('{{ until 1000000 | len }}').error.message).toContain(
      'error calling until: execution budget exceeded: more than 1000000 steps',
    );
  });

  it('stops a string doubled in a loop by the characters the calls go through, or at the first result over the limit', () => {
    const doubling = '{{ $x := "a" }}{{ range until 100 }}{{ $x = cat $x $x }}{{ end }}';
    const { error, ms } = failure(doubling);
    expect(error.message).toBe(
      'template: pipeline_template:1:44: executing "pipeline_template" at <cat $x $x>: error calling cat: execution budget exceeded: more than 1000000 steps',
    );
    expect(ms).toBeLessThan(3000);
    expect(failure(doubling, { maxSteps: 1e9 }).error.message).toBe(
      'template: pipeline_template:1:44: executing "pipeline_template" at <cat $x $x>: error calling cat: ' +
        'execution budget exceeded: a string of 33554431 bytes (at most 16777216)',
    );
  });
});

describe('the execution budget: steps', () => {
  it('counts walked nodes and range iterations', () => {
    // 1 range node + 5 iterations × (1 iteration + 1 text node) + 1 call of until + 5 elements.
    expect(renderWithin({ maxSteps: 17 }, '{{ range until 5 }}x{{ end }}')).toBe('xxxxx');
    expect(() => renderWithin({ maxSteps: 16 }, '{{ range until 5 }}x{{ end }}')).toThrow(TemplateBudgetError);
  });

  it('counts iterations of a range over an integer, which allocates nothing', () => {
    expect(() => renderWithin({ maxSteps: 1000 }, '{{ range 100000000 }}{{ end }}')).toThrow(
      'template: tpl:1:9: executing "tpl" at <100000000>: execution budget exceeded: more than 1000 steps',
    );
  });

  it('charges a call for the characters it takes and returns', () => {
    const data = { big: 'x'.repeat(32 * 100) };
    // 1 action + a call of upper: 1 + 100 (argument) + 100 (result).
    expect(renderWithin({ maxSteps: 202 }, '{{ upper .big }}', data)).toBe('X'.repeat(3200));
    expect(() => renderWithin({ maxSteps: 201 }, '{{ upper .big }}', data)).toThrow(TemplateBudgetError);
  });

  it('charges the comparisons of uniq and without', () => {
    expect(() => renderWithin({ maxSteps: 10_000 }, '{{ uniq (until 1000) | len }}')).toThrow(
      'error calling uniq: execution budget exceeded',
    );
    expect(() => renderWithin({ maxSteps: 10_000 }, '{{ without (until 1000) 1 2 3 4 5 6 7 8 9 10 | len }}')).toThrow(
      'error calling without: execution budget exceeded',
    );
    expect(renderWithin({ maxSteps: 10_000 }, '{{ uniq (list 1 2 1 3 2) }}')).toBe('[1 2 3]');
  });
});

describe('the execution budget: output', () => {
  it('counts the UTF-8 bytes written', () => {
    expect(renderWithin({ maxOutputBytes: 12 }, '{{ range until 4 }}é{{ . }}{{ end }}')).toBe('é0é1é2é3');
    expect(() => renderWithin({ maxOutputBytes: 11 }, '{{ range until 4 }}é{{ . }}{{ end }}')).toThrow(
      // Go counts columns in bytes.
      'template: tpl:1:24: executing "tpl" at <{{.}}>: execution budget exceeded: output of more than 11 bytes',
    );
  });

  it('counts a character outside the BMP as four bytes', () => {
    expect(renderWithin({ maxOutputBytes: 8 }, '😀😀')).toBe('😀😀');
    expect(() => renderWithin({ maxOutputBytes: 7 }, '😀😀')).toThrow(TemplateBudgetError);
  });

  it('limits any one string a function returns', () => {
    expect(renderWithin({ maxOutputBytes: 6 }, '{{ upper "abcdef" | len }}')).toBe('6');
    expect(() => renderWithin({ maxOutputBytes: 5 }, '{{ upper "abcdef" | len }}')).toThrow(
      'error calling upper: execution budget exceeded: a string of 6 bytes (at most 5)',
    );
  });

  it('checks the size of what repeat, indent, replace, join, printf padding and the random strings would build', () => {
    const within = { maxOutputBytes: 100 };
    expect(renderWithin(within, '{{ repeat 50 "é" | len }}')).toBe('100');
    expect(() => renderWithin(within, '{{ repeat 51 "é" | len }}')).toThrow(
      'error calling repeat: execution budget exceeded: a string of 102 bytes',
    );
    // Ten lines of one letter: ten pads, ten letters, nine newlines.
    expect(renderWithin(within, '{{ indent 8 "a\\nb\\nc\\nd\\ne\\nf\\ng\\nh\\ni\\nj" | len }}')).toBe('99');
    expect(() => renderWithin(within, '{{ indent 9 "a\\nb\\nc\\nd\\ne\\nf\\ng\\nh\\ni\\nj" | len }}')).toThrow(
      'error calling indent: execution budget exceeded: a string of 109 bytes',
    );
    expect(renderWithin(within, '{{ replace "" "xxxxxxxxx" "abcdefghi" | len }}')).toBe('99');
    expect(() => renderWithin(within, '{{ replace "" "xxxxxxxxxx" "abcdefghi" | len }}')).toThrow(
      'error calling replace: execution budget exceeded: a string of 109 bytes',
    );
    expect(() => renderWithin(within, '{{ Replace "a a a a" "a" (repeat 30 "b") -1 | len }}')).toThrow(
      'error calling Replace: execution budget exceeded: a string of 123 bytes',
    );
    expect(renderWithin(within, '{{ join (repeat 10 "-") (until 10) | len }}')).toBe('100');
    expect(() => renderWithin(within, '{{ join (repeat 10 "-") (until 11) | len }}')).toThrow(
      'error calling join: execution budget exceeded: a string of 112 bytes',
    );
    expect(() => renderWithin(within, '{{ printf "%99d%99d" 1 2 | len }}')).toThrow('error calling printf: execution budget exceeded');
    expect(() => renderWithin(within, '{{ randAlpha 101 }}')).toThrow(
      'error calling randAlpha: execution budget exceeded: a string of 101 bytes',
    );
    expect(() => renderWithin(within, '{{ randBytes 76 }}')).toThrow(
      'error calling randBytes: execution budget exceeded: a string of 104 bytes',
    );
  });
});

describe('the execution budget: lists', () => {
  it('checks the length of what until, untilStep, seq and concat would build', () => {
    const within = { maxListLength: 10 };
    expect(renderWithin(within, '{{ until 10 | len }} {{ untilStep 0 20 2 | len }} {{ seq 10 }}')).toBe('10 10 1 2 3 4 5 6 7 8 9 10');
    expect(() => renderWithin(within, '{{ untilStep 0 21 2 }}')).toThrow(
      'error calling untilStep: execution budget exceeded: a list of 11 elements (at most 10)',
    );
    expect(() => renderWithin(within, '{{ untilStep 10 -1 -1 }}')).toThrow('a list of 11 elements (at most 10)');
    expect(() => renderWithin(within, '{{ seq 0 10 }}')).toThrow('error calling seq: execution budget exceeded: a list of 11 elements');
    expect(() => renderWithin(within, '{{ concat (until 6) (until 5) }}')).toThrow(
      'error calling concat: execution budget exceeded: a list of 11 elements',
    );
  });

  it('builds at most one piece over the limit when splitting, and splits as before within it', () => {
    const within = { maxListLength: 5 };
    expect(renderWithin(within, '{{ splitList "," "a,b,c,d,e" }} {{ splitn "," 100 "a,b,c" }} {{ regexSplit "," "a,b" 100 }}')).toBe(
      '[a b c d e] map[_0:a _1:b _2:c] [a b]',
    );
    expect(renderWithin(within, '{{ regexFindAll "[a-z]" "a1b2c3d4e" -1 }} {{ splitList "" "ab😀" }}')).toBe('[a b c d e] [a b 😀]');
    expect(() => renderWithin(within, '{{ splitList "," "a,b,c,d,e,f" }}')).toThrow(
      'error calling splitList: execution budget exceeded: a list of more than 5 elements',
    );
    expect(() => renderWithin(within, '{{ split "" "abcdef" }}')).toThrow(
      'error calling split: execution budget exceeded: a list of 6 elements',
    );
    expect(() => renderWithin(within, '{{ regexFindAll "" "abcdef" -1 }}')).toThrow(
      'error calling regexFindAll: execution budget exceeded',
    );
  });

  it('limits any one list a function returns', () => {
    expect(() => renderWithin({ maxListLength: 5 }, '{{ append (until 5) 5 }}')).toThrow(
      'error calling append: execution budget exceeded: a list of 6 elements (at most 5)',
    );
  });
});

describe('the execution budget: defaults', () => {
  it('are 1,000,000 steps, 16 MiB of output, 1,000,000 list elements and 1 s', () => {
    expect(DEFAULT_EXECUTION_BUDGET).toEqual({
      maxSteps: 1_000_000,
      maxOutputBytes: 16 * 1024 * 1024,
      maxListLength: 1_000_000,
      maxDuration: 1000,
    });
  });

  it('leave ordinary templates alone, and each render starts afresh', () => {
    const t = parseTemplate('{{ range until 1000 }}{{ . }}{{ end }}', { name: 'tpl', funcs: referenceFuncs, budget: { maxSteps: 5000 } });
    for (let i = 0; i < 10; i++) expect(t.execute({})).toHaveLength(2890);
    expect(render('{{ repeat 3 "ab" }}|{{ seq 3 }}|{{ until 3 }}')).toBe('ababab|1 2 3|[0 1 2]');
  });

  it('still report Go errors before budget ones', () => {
    expect(() => render('{{ repeat -1 "x" }}')).toThrow('error calling repeat: strings: negative Repeat count');
  });
});

describe('the execution budget: wall time', () => {
  /** A fake clock: `advance` moves it, `reads` counts how often the render looked at it. */
  function fakeClock(stepPerRead = 0) {
    const clock = {
      now: 0,
      reads: 0,
      read: (): number => {
        clock.reads++;
        clock.now += stepPerRead;
        return clock.now;
      },
    };
    return clock;
  }

  /** `tick MS` moves the fake clock on, as a slow function call would. */
  function ticking(clock: { now: number }) {
    let ticks = 0;
    const funcs = {
      tick: defineFunc([T_INT], (ms: GoInt) => {
        ticks++;
        clock.now += Number(ms.value);
        return '';
      }),
    };
    return { funcs, ticks: () => ticks };
  }

  it('fails a render that takes more than 1 s by default, at the call that went over', () => {
    const clock = fakeClock();
    const { funcs, ticks } = ticking(clock);
    const t = parseTemplate('{{ tick 400 }}{{ tick 400 }}{{ tick 400 }}{{ tick 400 }}', {
      name: 'pipeline_template',
      funcs,
      now: clock.read,
    });
    let error: unknown;
    try {
      t.execute({});
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TemplateBudgetError);
    expect((error as TemplateBudgetError).limit).toBe('time');
    expect((error as Error).message).toBe(
      'template: pipeline_template:1:31: executing "pipeline_template" at <tick 400>: error calling tick: execution budget exceeded: render took more than 1s',
    );
    expect(ticks()).toBe(3);
  });

  it('gives every render its own time, and renders what fits', () => {
    const clock = fakeClock();
    const { funcs } = ticking(clock);
    const t = parseTemplate('{{ tick 999 }}ok', { funcs, now: clock.read });
    expect(t.execute({})).toBe('ok');
    expect(t.execute({})).toBe('ok');
    const short = parseTemplate('{{ tick 60 }}{{ tick 60 }}', { funcs, now: clock.read, budget: { maxDuration: 100 } });
    expect(() => short.execute({})).toThrow('error calling tick: execution budget exceeded: render took more than 100ms');
  });

  it('times a walk that calls no function, reading the clock every few steps', () => {
    const clock = fakeClock(1);
    const t = parseTemplate('{{ range 100000000 }}{{ end }}', { name: 'tpl', now: clock.read, budget: { maxSteps: 1e12 } });
    expect(() => t.execute({})).toThrow(
      'template: tpl:1:9: executing "tpl" at <100000000>: execution budget exceeded: render took more than 1s',
    );
    // 128 steps a reading: stopped after about 128,000 of the 100,000,000 iterations.
    expect(clock.reads).toBe(1002);
  });

  it('stops bcrypt between its rounds, not after them', () => {
    const clock = fakeClock(1);
    const t = parseTemplate('{{ bcrypt "secret" }}', { name: 'tpl', funcs: referenceFuncs, now: clock.read, budget: { maxDuration: 100 } });
    expect(() => t.execute({})).toThrow(
      'template: tpl:1:3: executing "tpl" at <bcrypt "secret">: error calling bcrypt: execution budget exceeded: render took more than 100ms',
    );
    // One reading per round of the 1024 a cost of 10 takes.
    expect(clock.reads).toBe(102);
  });

  it('does not start a key generation that took longer last time than the render has left', () => {
    const clock = fakeClock();
    const { funcs } = ticking(clock);
    // Times one 4096-bit RSA key generation of 800 ms on this clock, as a slow machine would.
    const meter = new BudgetMeter({ ...DEFAULT_EXECUTION_BUDGET }, clock.read);
    meter.uninterruptible('key rsa-4096', () => {
      clock.now += 800;
    });
    const t = parseTemplate('{{ tick 300 }}{{ genPrivateKey "rsa" }}', {
      name: 'tpl',
      funcs: { ...referenceFuncs, ...funcs },
      now: clock.read,
    });
    expect(() => t.execute({})).toThrow(
      'template: tpl:1:17: executing "tpl" at <genPrivateKey "rsa">: error calling genPrivateKey: execution budget exceeded: render would take more than 1s',
    );
  });

  it('stops waiting for a 4096-bit RSA key when the render has no time left', () => {
    const t = parseTemplate('{{ genPrivateKey "rsa" }}', { name: 'tpl', funcs: referenceFuncs, budget: { maxDuration: 1 } });
    expect(() => t.execute({})).toThrow(
      'template: tpl:1:3: executing "tpl" at <genPrivateKey "rsa">: error calling genPrivateKey: execution budget exceeded: render took more than 1ms',
    );
  });

  it("stops waiting for derivePassword's scrypt when the render has no time left", () => {
    const t = parseTemplate('{{ derivePassword 1 "long" "password" "user" "example.com" }}', {
      name: 'tpl',
      funcs: referenceFuncs,
      budget: { maxDuration: 1 },
    });
    expect(() => t.execute({})).toThrow('error calling derivePassword: execution budget exceeded: render took more than 1ms');
  });

  it('fails the render when a call gives up waiting, and takes the next of its kind to need at least that long for a minute', () => {
    const clock = fakeClock();
    const meter = new BudgetMeter({ ...DEFAULT_EXECUTION_BUDGET }, clock.read);
    const left: number[] = [];
    const givesUp = (msLeft: number) => {
      left.push(msLeft);
      return TIMED_OUT;
    };
    expect(() => meter.uninterruptible('gives up', givesUp)).toThrow('execution budget exceeded: render took more than 1s');
    // The next render has 999 ms left when it gets there: less than the 1000 the last call waited.
    const next = new BudgetMeter({ ...DEFAULT_EXECUTION_BUDGET }, clock.read);
    clock.now += 1;
    expect(() => next.uninterruptible('gives up', givesUp)).toThrow('execution budget exceeded: render would take more than 1s');
    // A minute on, what the call took is forgotten: it is tried again.
    clock.now += 60_000;
    expect(() => new BudgetMeter({ ...DEFAULT_EXECUTION_BUDGET }, clock.read).uninterruptible('gives up', givesUp)).toThrow(
      'execution budget exceeded: render took more than 1s',
    );
    expect(left).toEqual([1000, 1000]);
  });

  it('runs an uninterruptible call to its end and fails the render after it when it went over', () => {
    const clock = fakeClock();
    const meter = new BudgetMeter({ ...DEFAULT_EXECUTION_BUDGET }, clock.read);
    let calls = 0;
    const slow = () => {
      calls++;
      clock.now += 1500;
      return 'done';
    };
    expect(() => meter.uninterruptible('slow', slow)).toThrow('execution budget exceeded: render took more than 1s');
    expect(() => new BudgetMeter({ ...DEFAULT_EXECUTION_BUDGET }, clock.read).uninterruptible('slow', slow)).toThrow(
      'execution budget exceeded: render would take more than 1s',
    );
    expect(calls).toBe(1);
  });
});

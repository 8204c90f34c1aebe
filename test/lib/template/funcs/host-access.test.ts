import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostlessReferenceFuncs, referenceFuncs, withoutHostAccess } from '../../../../lib/template/index.js';
import { render, renderError } from '../render.js';

const SECRET = 'RIVULET_HOST_ACCESS_TEST';

describe('withoutHostAccess', () => {
  beforeEach(() => {
    process.env[SECRET] = 's3cret';
  });
  afterEach(() => {
    delete process.env[SECRET];
  });

  it('reads no environment variable with env and expandenv', () => {
    expect(render(`{{ env "${SECRET}" }}`)).toBe('s3cret');
    expect(render(`[{{ env "${SECRET}" }}]`, {}, hostlessReferenceFuncs)).toBe('[]');
    expect(render(`{{ expandenv "a=$${SECRET} b=\${${SECRET}}!" }}`, {}, hostlessReferenceFuncs)).toBe('a= b=!');
  });

  it('fails getHostByName before any lookup', () => {
    expect(renderError('{{ getHostByName "localhost" }}', {}, hostlessReferenceFuncs)).toBe(
      'template: tpl:1:3: executing "tpl" at <getHostByName "localhost">: error calling getHostByName: getHostByName: this template may not resolve host names',
    );
  });

  it('keeps every other function, and adds none the map lacks', () => {
    expect(Object.keys(hostlessReferenceFuncs)).toEqual(Object.keys(referenceFuncs));
    expect(hostlessReferenceFuncs.upper).toBe(referenceFuncs.upper);
    expect(Object.keys(withoutHostAccess({ upper: referenceFuncs.upper! }))).toEqual(['upper']);
    expect(Object.isFrozen(hostlessReferenceFuncs)).toBe(true);
  });
});

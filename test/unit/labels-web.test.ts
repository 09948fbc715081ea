import { describe, expect, it } from 'vitest';
import { labelWebUrl } from '../../src/labels/web.js';

describe('labelWebUrl', () => {
  it("Google's service: the label's page under the labels manager (drive.google.com/labels)", () => {
    expect(labelWebUrl('https://drivelabels.googleapis.com', 'abc123')).toBe('https://drive.google.com/labels/abc123');
  });
  it('any other label service (the mock): BASE/labels/ID on its origin, the id escaped', () => {
    expect(labelWebUrl('http://127.0.0.1:4010/', 'abc123')).toBe('http://127.0.0.1:4010/labels/abc123');
    expect(labelWebUrl('http://127.0.0.1:4010', 'a/b?c')).toBe('http://127.0.0.1:4010/labels/a%2Fb%3Fc');
  });
});

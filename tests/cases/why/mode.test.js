const test = require('node:test');
const assert = require('node:assert');

const mode = process.env.ZZ_MODE || 'loose';

function parse(text) {
  if (mode === 'strict' && text.includes(' ')) throw new Error(`strict mode rejects spaces in ${JSON.stringify(text)}`);
  return text.split(',').map((s) => Number(s.trim()));
}

test('parses a list with spaces', () => {
  assert.deepStrictEqual(parse('1, 2'), [1, 2]);
});

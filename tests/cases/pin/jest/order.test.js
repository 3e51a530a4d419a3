// An order dependency: "empty" fails when "fill" ran before it (jest --randomize shuffles them).
const cache = new Map();

test("fill", () => {
  cache.set("key", 1);
});

test("empty", () => {
  expect(cache.size).toBe(0);
});

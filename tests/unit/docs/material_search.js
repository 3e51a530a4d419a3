// The docs site's own search, run outside a browser (tests/unit/docs/test_docs.py): the
// search worker mkdocs-material ships, fed the built site's search_index.json, asked QUERY.
//   node material_search.js SITE QUERY   -> the pages in the order the search box lists them (JSON)
"use strict";
const fs = require("fs"), path = require("path"), vm = require("vm");
const [site, query] = process.argv.slice(2);
const workers = path.join(site, "assets", "javascripts", "workers");
const worker = fs.readdirSync(workers).find(name => /^search\..*\.js$/.test(name));
const index = JSON.parse(fs.readFileSync(path.join(site, "search", "search_index.json"), "utf8"));

let onMessage = null;
const replies = [];
globalThis.self = globalThis;  // a worker's global scope, as far as this worker uses it
globalThis.addEventListener = (type, handler) => { if (type === "message") onMessage = handler; };
globalThis.postMessage = reply => replies.push(reply);
vm.runInThisContext(fs.readFileSync(path.join(workers, worker), "utf8"), { filename: worker });

async function ask(message, count) {  // the worker answers each message once, asynchronously
  onMessage({ data: message });
  while (replies.length < count) await new Promise(resolve => setImmediate(resolve));
  return replies[count - 1];
}

(async () => {
  await ask({ type: 0, data: { config: index.config, docs: index.docs, options: { suggest: false } } }, 1);
  const result = await ask({ type: 2, data: query }, 2);
  // one item per page, best first; a page's sections carry its location plus an anchor
  const pages = result.data.items.map(sections => sections[0].location.split("#")[0]);
  process.stdout.write(JSON.stringify(pages) + "\n");
})();

// Renders CSL-JSON items with citeproc-js, the CSL reference implementation.
// stdin: {"module": path of citeproc_commonjs.js, "style": path of a .csl file,
//         "locales": folder of locales-xx-XX.xml files, "lang": "en-US",
//         "format": "text" | "html", "items": [CSL-JSON items]}
// stdout: {"order": [ids in bibliography order], "entries": {id: entry},
//          "citations": {id: in-text citation of that item alone}}
"use strict";
const fs = require("fs");
const path = require("path");

const request = JSON.parse(fs.readFileSync(0, "utf8"));
const CSL = require(request.module);
const items = Object.fromEntries(request.items.map((item) => [item.id, item]));
const sys = {
  retrieveItem: (id) => items[id],
  retrieveLocale: (lang) => {
    const file = path.join(request.locales, `locales-${lang}.xml`);
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : false;
  },
};
const engine = new CSL.Engine(sys, fs.readFileSync(request.style, "utf8"), request.lang, true);
engine.setOutputFormat(request.format);
const ids = request.items.map((item) => item.id);
engine.updateItems(ids);
const citations = {};
for (const id of ids) {
  citations[id] = engine.makeCitationCluster([{ id }]);
}
const entries = {};
let order = [];
const bibliography = engine.makeBibliography();
if (bibliography) {
  const [meta, texts] = bibliography;
  order = meta.entry_ids.map((group) => group[0]);
  order.forEach((id, index) => { entries[id] = texts[index].trim(); });
}
process.stdout.write(JSON.stringify({ order, entries, citations }));

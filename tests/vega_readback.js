// One Vega view's scenegraph flattened into view coordinates (tests/vega_readback.py).
([id, wanted]) => {
  const view = VIEWS[id];
  const keep = wanted ? new Set(wanted) : null;
  const out = {cells: [], headers: [], labels: [], marks: [], texts: [], scales: {}};
  const clean = (value) => {
    if (value === undefined) return "__undefined__";
    if (typeof value === "number" && !Number.isFinite(value)) return "__" + String(value) + "__";
    return value;
  };
  const plain = (obj) => {
    if (!obj) return null;
    const o = {};
    for (const [k, v] of Object.entries(obj)) if (!k.startsWith("Symbol")) o[k] = clean(v);
    return o;
  };
  function walk(mark, ox, oy, axisOrient, cell) {
    const role = mark.role;
    for (const item of mark.items) {
      const x = ox + (item.x || 0), y = oy + (item.y || 0);
      if (role === "row-header" || role === "column-header") {
        const titles = [];
        for (const m of item.items || []) for (const g of m.items || []) for (const t of g.items || [])
          for (const txt of t.items || []) if (txt.text !== undefined) titles.push(txt.text);
        out.headers.push({role, datum: plain(item.datum), x, y,
          width: item.width || 0, height: item.height || 0, text: titles});
      }
      let here = cell;
      if (mark.marktype === "group" && role === "scope" && mark.name && mark.name.endsWith("_cell")) {
        here = out.cells.length;
        out.cells.push({datum: plain(item.datum), x, y, width: item.width || 0, height: item.height || 0});
      }
      if (mark.marktype === "text" && item.text !== undefined && role !== "axis-label") {
        out.texts.push({role, text: String(item.text), x, y, cell: here});
      }
      if (role === "axis-label") {
        out.labels.push({orient: axisOrient, text: String(item.text), x, y, cell: here});
      }
      if (role === "mark") {
        const datum = {};
        for (const [k, v] of Object.entries(item.datum || {}))
          if (!keep || keep.has(k)) datum[k] = clean(v);
        // A point of an area or line without a valid value is not drawn (Vega's "defined").
        if (item.defined === false) continue;
        out.marks.push({mark: mark.name, type: mark.marktype, datum,
          tooltip: item.tooltip === undefined ? null : plain(item.tooltip),
          fill: item.fill === undefined ? null : String(item.fill),
          text: item.text === undefined ? null : String(item.text),
          x, y, width: item.width || 0, height: item.height || 0, cell: here});
        if (mark.marktype === "area" || mark.marktype === "line") break;  // one item per path
      }
      if (mark.marktype === "group") {
        let orient = axisOrient;
        if (role === "axis" && item.datum && item.datum.orient) orient = item.datum.orient;
        if (role === "axis" && item.orient) orient = item.orient;
        for (const child of item.items || []) walk(child, x, y, orient, here);
      }
    }
  }
  walk(view.scenegraph().root, 0, 0, null, null);
  const scales = (context) => {
    const found = {};
    for (const [name, op] of Object.entries(context.scales || {})) {
      const scale = op.value;
      if (scale && scale.domain) found[name] = {type: scale.type, domain: scale.domain().map(clean)};
    }
    return found;
  };
  out.scales = scales(view._runtime);
  // The scales of each facet cell resolved on its own (a dataflow per cell, its facet values
  // in signal "parent").
  out.cellScales = [];
  const visit = (context) => {
    for (const sub of context.subcontext || []) {
      const parent = sub.signals && sub.signals.parent;
      const own = scales(sub);
      if (parent && Object.keys(own).length) out.cellScales.push({datum: plain(parent.value), scales: own});
      visit(sub);
    }
  };
  visit(view._runtime);
  return JSON.stringify(out);  // one string: Playwright's own serialiser is slow on large trees
}

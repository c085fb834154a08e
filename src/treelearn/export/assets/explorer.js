// treelearn explorer: reads the JSON written by treelearn.export.explorer and renders it.
// No network, no library. The tree's routing rule is the kernels' (treelearn/_tree.py):
// float32(x) <= threshold goes to branch 0 (at an oblique node the weighted sum of the float32
// values, summed left to right in double, NaN when a value is missing); a categorical node looks its level up in its
// table; a missing value (or an unseen level) takes missing_branch, or every branch with
// weight proportional to the branch's training weight when missing_branch is -1.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("tree-data").textContent);
  const n = D.children.length;
  const nSteps = D.alphas.length - 1;
  const threshold = D.threshold.map((t) => (t === "inf" ? Infinity : t === "-inf" ? -Infinity : t));
  const isLeaf = D.children.map((c) => c.length === 0);
  const parent = new Int32Array(n).fill(-1);
  const depth = new Int32Array(n);
  // Step of the pruning sequence at which a node is collapsed (Infinity: never, a leaf).
  const collapse = D.collapse.map((s) => (s < 0 ? Infinity : s));
  // Smallest collapse step among a node's proper ancestors: the node is in the tree
  // after k collapses if and only if minAnc >= k (parents precede children).
  const minAnc = new Float64Array(n).fill(Infinity);
  for (let i = 0; i < n; i++) {
    for (const c of D.children[i]) {
      parent[c] = i;
      depth[c] = depth[i] + 1;
      minAnc[c] = Math.min(minAnc[i], collapse[i]);
    }
  }
  const levelIndex = D.levels.map((lv) => {
    if (!lv) return null;
    const m = new Map();
    lv.forEach((v, k) => m.set(v, k));
    return m;
  });
  const fmt = (v) => (v === null || v === undefined ? "\u2013" : Number(v).toPrecision(4));
  const $ = (id) => document.getElementById(id);

  // -- the tree as nested lists ------------------------------------------------------------
  const li = new Array(n);
  const row = new Array(n);
  function build() {
    const rootUl = document.createElement("ul");
    const stack = [[0, rootUl]];
    while (stack.length) {
      const [i, ul] = stack.pop();
      const item = document.createElement("li");
      item.dataset.node = i;
      if (isLeaf[i]) item.className = "leaf";
      const r = document.createElement("div");
      r.className = "row";
      r.dataset.node = i;
      const tog = document.createElement("span");
      tog.className = "tog";
      tog.textContent = "\u25be";
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = D.color[i];
      const edge = document.createElement("span");
      edge.className = "edge";
      edge.textContent = i === 0 ? "root" : D.edge[i];
      const what = document.createElement("span");
      what.className = "what";
      what.textContent = isLeaf[i] ? "" : "split on " + D.split_name[i];
      const pred = document.createElement("span");
      pred.className = "pred";
      pred.textContent = (D.classifier ? "\u2192 class " : "\u2192 value ") + D.prediction[i];
      const cnt = document.createElement("span");
      cnt.className = "n";
      cnt.textContent = "(" + D.samples[i] + ")";
      r.append(tog, sw, edge, what, pred, cnt);
      item.appendChild(r);
      li[i] = item;
      row[i] = r;
      ul.appendChild(item);
      const kids = D.children[i];
      if (kids.length) {
        const sub = document.createElement("ul");
        item.appendChild(sub);
        // pushed last branch first: popped, and appended to ``sub``, in branch order
        for (let b = kids.length - 1; b >= 0; b--) stack.push([kids[b], sub]);
      }
    }
    $("tree").appendChild(rootUl);
  }

  // -- pruning: state of every node after k collapses -----------------------------------------
  let step = 0;
  const cut = new Uint8Array(n); // 1 where an internal node is a leaf at this step
  const present = new Uint8Array(n).fill(1);
  let rects = null;
  function applyStep(k) {
    step = k;
    let leaves = 0;
    let maxDepth = 0;
    for (let i = 0; i < n; i++) {
      const here = minAnc[i] >= k ? 1 : 0;
      const isCut = here && !isLeaf[i] && collapse[i] < k ? 1 : 0;
      if (isCut !== cut[i]) {
        cut[i] = isCut;
        li[i].classList.toggle("cut", isCut === 1);
      }
      present[i] = here;
      if (here) {
        if (isLeaf[i] || isCut) leaves++;
        if (depth[i] > maxDepth) maxDepth = depth[i];
      }
      if (rects) rects[i].style.display = here && (isLeaf[i] || isCut) ? "" : "none";
    }
    $("step-value").textContent = k;
    $("alpha").textContent = fmt(D.alphas[k]);
    $("leaf-count").textContent = leaves;
    $("depth").textContent = maxDepth;
    $("train-score").textContent = D.train_score ? fmt(D.train_score[k]) : "\u2013";
    $("valid-score").textContent = D.valid_score ? fmt(D.valid_score[k]) : "\u2013";
    if (lastSample) showRoute(lastSample);
  }

  // -- details of a node ----------------------------------------------------------------------
  function rule(i) {
    const parts = [];
    for (let j = i; j > 0; j = parent[j]) parts.push(D.edge[j]);
    return parts.length ? parts.reverse().join(" and\n") : "(root: every case)";
  }
  let selected = -1;
  function showDetails(i) {
    const rows = [
      ["node", "#" + i + (isLeaf[i] ? " (leaf)" : cut[i] ? " (pruned to a leaf)" : "")],
      ["depth", depth[i]],
      ["samples", D.samples[i] + " (weight " + fmt(D.weight[i]) + ")"],
      ["impurity", fmt(D.impurity[i])],
      ["prediction", D.prediction[i]],
    ];
    if (D.classifier) {
      const w = D.weight[i];
      rows.push(["classes", D.classes.map((c, k) => c + ": " + D.counts[i][k] + " (" +
        (100 * D.counts[i][k] / w).toFixed(1) + "%)").join(", ")]);
    }
    if (!isLeaf[i]) rows.push(["split", D.split_name[i]]);
    if (collapse[i] !== Infinity) rows.push(["pruned at step", collapse[i] + 1 +
      " (alpha " + fmt(D.alphas[collapse[i] + 1]) + ")"]);
    const body = $("details-body");
    body.textContent = "";
    const pre = document.createElement("pre");
    pre.className = "rule";
    pre.id = "details-rule";
    pre.textContent = rule(i);
    const table = document.createElement("table");
    for (const [k, v] of rows) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = v;
    }
    body.append(pre, table);
  }
  function onTree(ev, click) {
    const r = ev.target.closest(".row");
    if (!r) return;
    const i = Number(r.dataset.node);
    if (click && ev.target.classList.contains("tog")) {
      li[i].classList.toggle("folded");
      r.querySelector(".tog").textContent = li[i].classList.contains("folded") ? "\u25b8" : "\u25be";
      return;
    }
    if (click) {
      if (selected >= 0) row[selected].classList.remove("selected");
      selected = i;
      r.classList.add("selected");
      showDetails(i);
    } else if (selected < 0) {
      showDetails(i);
    }
  }
  function fold(maxDepth) {
    for (let i = 0; i < n; i++) {
      if (isLeaf[i]) continue;
      const f = depth[i] >= maxDepth;
      li[i].classList.toggle("folded", f);
      row[i].querySelector(".tog").textContent = f ? "\u25b8" : "\u25be";
    }
  }

  // -- routing a sample -----------------------------------------------------------------------
  function branchOf(i, values) {
    const f = D.feature[i];
    const terms = D.terms[i];
    if (terms) {
      let s = 0.0;
      for (const [g, w] of terms) {
        const x = values[g];
        if (x === null || Number.isNaN(x)) return D.missing_branch[i];
        s = s + w * Math.fround(x);
      }
      if (Number.isNaN(s)) return D.missing_branch[i];
      return s <= threshold[i] ? 0 : 1;
    }
    const v = values[f];
    if (levelIndex[f]) {
      const code = v === null ? undefined : levelIndex[f].get(v);
      const table = D.cat_branch[i];
      const b = code === undefined || code >= table.length ? -1 : table[code];
      return b >= 0 ? b : D.missing_branch[i];
    }
    if (v === null || Number.isNaN(v)) return D.missing_branch[i];
    return Math.fround(v) <= threshold[i] ? 0 : 1;
  }
  // The nodes a sample reaches in the tree pruned at the current step, and the leaf of
  // largest weight (the first on ties, in branch order), as Tree.apply returns it.
  function route(values) {
    const reached = [];
    let best = -1;
    let leaf = -1;
    const stack = [[0, 1.0]];
    while (stack.length) {
      const [i, w] = stack.pop();
      reached.push(i);
      if (isLeaf[i] || collapse[i] < step) {
        if (w > best) { best = w; leaf = i; }
        continue;
      }
      const kids = D.children[i];
      const b = branchOf(i, values);
      if (b >= 0) { stack.push([kids[b], w]); continue; }
      let total = 0;
      for (const c of kids) total += D.weight[c];
      for (let j = kids.length - 1; j >= 0; j--) stack.push([kids[j], w * (D.weight[kids[j]] / total)]);
    }
    return { reached, leaf, weight: best };
  }
  // -- SHAP values of a sample in the tree pruned at the current step ----------------------
  // Path-dependent TreeSHAP (Lundberg et al. 2020, Algorithm 2: EXTEND, UNWIND, the unwound
  // sum), as treelearn/_shap.py computes it: at each node the branch branchOf gives the
  // sample (o = 1 there, 0 elsewhere), or every branch at its training share (o = z) where the
  // tree sends it down all of them; z the branch's share of the node's training weight. A
  // node the slider has collapsed is a leaf with its own value. The path is copied per node
  // (a row of numbers per depth): a page explains one sample at a time.
  function extendPath(P, pz, po, pi) {
    const ud = P.f.length;
    P.f.push(pi); P.z.push(pz); P.o.push(po); P.w.push(ud === 0 ? 1 : 0);
    for (let i = ud - 1; i >= 0; i--) {
      P.w[i + 1] += po * P.w[i] * (i + 1) / (ud + 1);
      P.w[i] = pz * P.w[i] * (ud - i) / (ud + 1);
    }
  }
  function unwindPath(P, k) {
    const ud = P.f.length - 1;
    const o = P.o[k];
    const z = P.z[k];
    let next = P.w[ud];
    for (let i = ud - 1; i >= 0; i--) {
      if (o !== 0) {
        const t = P.w[i];
        P.w[i] = next * (ud + 1) / ((i + 1) * o);
        next = t - P.w[i] * z * (ud - i) / (ud + 1);
      } else {
        P.w[i] = P.w[i] * (ud + 1) / (z * (ud - i));
      }
    }
    P.f.splice(k, 1); P.z.splice(k, 1); P.o.splice(k, 1); P.w.pop();
  }
  function unwoundSum(P, k) {
    const ud = P.f.length - 1;
    const o = P.o[k];
    const z = P.z[k];
    let next = P.w[ud];
    let total = 0;
    for (let i = ud - 1; i >= 0; i--) {
      if (o !== 0) {
        const t = next * (ud + 1) / ((i + 1) * o);
        total += t;
        next = P.w[i] - t * z * (ud - i) / (ud + 1);
      } else {
        total += P.w[i] / z * (ud + 1) / (ud - i);
      }
    }
    return total;
  }
  // [child, z, o] of each branch of a node: its share of the training weight, and the
  // sample's share (1 down the branch it takes, 0 elsewhere; every branch's training share
  // where the tree sends it down all of them)
  function shares(node, values) {
    const kids = D.children[node];
    const b = branchOf(node, values);
    let total = 0;
    for (const c of kids) total += D.weight[c];
    return kids.map((c, j) => {
      const z = D.weight[c] / total;
      return [c, z, b >= 0 ? (j === b ? 1 : 0) : z];
    });
  }
  // An oblique tree (treelearn/_shap.py's subsets): a node is known when every column it
  // reads is; each leaf's product of (z + (o - z) [known]) multiplied out node by node into
  // unanimity games on unions of columns (a Map from the sorted union to its coefficient),
  // each giving its members 1 / |union|.
  function shapSubsets(values, phi, V, val, atLeaf) {
    function walk(node, states) {
      if (atLeaf(node)) {
        for (const [key, c] of states) {
          if (key === "" || c === 0) continue;
          const cols = key.split(",").map(Number);
          for (const f of cols) {
            for (let v = 0; v < V; v++) phi[f][v] += c * val[node][v] / cols.length;
          }
        }
        return;
      }
      const reads = D.terms[node] ? D.terms[node].map(([g]) => g) : [D.feature[node]];
      for (const [child, z, o] of shares(node, values)) {
        const next = new Map();
        const add = (key, c) => next.set(key, (next.get(key) || 0) + c);
        for (const [key, c] of states) {
          if (z !== 0) add(key, c * z);
          if (o !== z) {
            const union = new Set(key === "" ? reads : key.split(",").map(Number).concat(reads));
            add(Array.from(union).sort((p, q) => p - q).join(","), c * (o - z));
          }
        }
        walk(child, next);
      }
    }
    walk(0, new Map([["", 1]]));
  }
  // {phi: [feature][output], expected: [output], prediction: [output]}, or null where the
  // page has no SHAP values (linear leaves).
  function shap(values) {
    const val = D.shap_value;
    if (!val) return null;
    const V = val[0].length;
    const phi = D.features.map(() => new Array(V).fill(0));
    const atLeaf = (i) => isLeaf[i] || collapse[i] < step;
    if (D.terms.some((t) => t)) shapSubsets(values, phi, V, val, atLeaf);
    else walk(0, { f: [], z: [], o: [], w: [] }, 1, 1, -1);
    function walk(node, parentPath, pz, po, pf) {
      const P = { f: parentPath.f.slice(), z: parentPath.z.slice(), o: parentPath.o.slice(),
        w: parentPath.w.slice() };
      extendPath(P, pz, po, pf);
      if (atLeaf(node)) {
        for (let q = 1; q < P.f.length; q++) {
          const s = unwoundSum(P, q) * (P.o[q] - P.z[q]);
          for (let v = 0; v < V; v++) phi[P.f[q]][v] += s * val[node][v];
        }
        return;
      }
      const d = D.feature[node];
      let iz = 1;
      let io = 1;
      const k = P.f.indexOf(d, 1);
      if (k > 0) { iz = P.z[k]; io = P.o[k]; unwindPath(P, k); }
      for (const [c, z, o] of shares(node, values)) {
        if (z * iz !== 0 || o * io !== 0) walk(c, P, z * iz, o * io, d);
      }
    }
    // the expected value of the pruned tree: leaves' values by the training shares
    function expected(node) {
      if (atLeaf(node)) return val[node].slice();
      const kids = D.children[node];
      let total = 0;
      for (const c of kids) total += D.weight[c];
      const out = new Array(V).fill(0);
      for (const c of kids) {
        const e = expected(c);
        for (let v = 0; v < V; v++) out[v] += D.weight[c] / total * e[v];
      }
      return out;
    }
    const ev = expected(0);
    const prediction = ev.map((e, v) => phi.reduce((acc, row) => acc + row[v], e));
    return { phi, expected: ev, prediction };
  }
  // The contributions table beside the path: the predicted class's probability (or the
  // value), columns by |contribution|, those of zero left out.
  function showContributions(values) {
    const box = $("contrib");
    const s = shap(values);
    if (!s) { box.hidden = true; return; }
    box.hidden = false;
    let k = 0;
    for (let v = 1; v < s.prediction.length; v++) if (s.prediction[v] > s.prediction[k]) k = v;
    const chosen = $("contrib-class").value;
    if (D.classifier && chosen !== "") k = Number(chosen);
    const what = D.classifier ? "P(" + D.classes[k] + ")" : "value";
    $("contrib-sum").textContent = what + ": expected " + fmt(s.expected[k]) +
      " + contributions = " + fmt(s.prediction[k]);
    const order = D.features.map((_, f) => f).filter((f) => s.phi[f][k] !== 0)
      .sort((a, b) => Math.abs(s.phi[b][k]) - Math.abs(s.phi[a][k]));
    const top = order.length ? Math.abs(s.phi[order[0]][k]) : 1;
    const table = $("contrib-table");
    table.textContent = "";
    for (const f of order) {
      const tr = table.insertRow();
      tr.dataset.feature = f;
      const x = values[f];
      tr.insertCell().textContent = D.features[f];
      tr.insertCell().textContent = x === null || Number.isNaN(x) ? "missing" : String(x);
      const c = tr.insertCell();
      c.className = "num";
      c.textContent = (s.phi[f][k] > 0 ? "+" : "") + fmt(s.phi[f][k]);
      const bar = document.createElement("span");
      bar.className = "bar " + (s.phi[f][k] > 0 ? "up" : "down");
      bar.style.width = (60 * Math.abs(s.phi[f][k]) / top).toFixed(1) + "px";
      tr.insertCell().appendChild(bar);
    }
    const zero = D.features.length - order.length;
    $("contrib-zero").textContent = zero ? zero + " other column" + (zero > 1 ? "s" : "") +
      ": 0" : "";
  }
  // The form's values (null / NaN: missing), or null when a number box holds no number.
  function readSample() {
    let ok = true;
    const values = D.features.map((_, f) => {
      const el = $("x-" + f);
      const t = el.value.trim();
      if (levelIndex[f]) return t === "" ? null : t;
      const v = t === "" ? NaN : Number(t);
      const bad = t !== "" && Number.isNaN(v);
      el.classList.toggle("invalid", bad);
      if (bad) ok = false;
      return v;
    });
    $("sample-error").textContent = ok ? "" : "Enter numbers (or leave a box empty for a missing value).";
    return ok ? values : null;
  }
  let lastSample = null;
  let lit = [];
  function showRoute(values) {
    lastSample = values;
    for (const i of lit) row[i].classList.remove("onpath", "hit");
    const r = route(values);
    lit = r.reached;
    for (const i of r.reached) row[i].classList.add("onpath");
    row[r.leaf].classList.add("hit");
    for (let j = parent[r.leaf]; j >= 0; j = parent[j]) {
      if (li[j].classList.contains("folded")) {
        li[j].classList.remove("folded");
        row[j].querySelector(".tog").textContent = "\u25be";
      }
    }
    $("routed-leaf").textContent = r.leaf;
    $("routed-prediction").textContent = "\u2192 " + D.prediction[r.leaf] +
      (r.weight < 1 ? " (weight " + fmt(r.weight) + ")" : "");
    row[r.leaf].scrollIntoView({ block: "nearest" });
    showContributions(values);
    if (probe) {
      const ok = values.every((v) => v !== null && !Number.isNaN(v));
      probe.style.display = ok ? "" : "none";
      if (ok) { probe.setAttribute("cx", values[0]); probe.setAttribute("cy", flipY(values[1])); }
    }
  }
  function buildForm() {
    const form = $("sample-form");
    D.features.forEach((name, f) => {
      const label = document.createElement("label");
      label.htmlFor = "x-" + f;
      label.textContent = name;
      let input;
      if (D.levels[f]) {
        input = document.createElement("select");
        const none = document.createElement("option");
        none.value = "";
        none.textContent = "(missing)";
        input.appendChild(none);
        for (const v of D.levels[f]) {
          const o = document.createElement("option");
          o.value = v;
          o.textContent = v;
          input.appendChild(o);
        }
      } else {
        input = document.createElement("input");
        input.type = "text";
        input.placeholder = "empty: missing";
      }
      input.id = "x-" + f;
      form.append(label, input);
    });
    const go = document.createElement("button");
    go.type = "submit";
    go.id = "route";
    go.textContent = "Route";
    form.appendChild(go);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const values = readSample();
      if (values) showRoute(values);
    });
  }

  // the class whose probability the contributions explain: the predicted one, or a chosen one
  function buildClassChoice() {
    const sel = $("contrib-class");
    if (!D.classifier) { $("contrib-class-box").hidden = true; return; }
    D.classes.forEach((c, k) => {
      const o = document.createElement("option");
      o.value = String(k);
      o.textContent = "P(" + c + ")";
      sel.appendChild(o);
    });
    sel.addEventListener("change", () => { if (lastSample) showContributions(lastSample); });
  }

  // -- decision regions (two numeric features) ------------------------------------------------
  let probe = null;
  let flipY = (y) => y;
  function buildRegions() {
    const R = D.regions;
    if (!R) { $("regions-box").style.display = "none"; return; }
    const svg = $("regions");
    const NS = "http://www.w3.org/2000/svg";
    const [[x0, x1], [y0, y1]] = R.extent;
    svg.setAttribute("viewBox", x0 + " " + y0 + " " + (x1 - x0) + " " + (y1 - y0));
    svg.setAttribute("preserveAspectRatio", "none");
    flipY = (y) => y0 + y1 - y; // SVG's y grows downwards
    const g = document.createElementNS(NS, "g");
    rects = new Array(n);
    for (let i = 0; i < n; i++) {
      let r;
      if (R.poly) { // an oblique tree: each node's region is a convex polygon
        r = document.createElementNS(NS, "polygon");
        r.setAttribute("points", R.poly[i].map(([px, py]) => px + "," + flipY(py)).join(" "));
      } else {
        r = document.createElementNS(NS, "rect");
        const [lx, ly] = R.lo[i];
        const [hx, hy] = R.hi[i];
        r.setAttribute("x", lx);
        r.setAttribute("y", flipY(hy));
        r.setAttribute("width", hx - lx);
        r.setAttribute("height", hy - ly);
      }
      r.setAttribute("fill", R.color[i]);
      r.dataset.node = i;
      r.style.display = "none";
      g.appendChild(r);
      rects[i] = r;
    }
    svg.appendChild(g);
    const rx = (x1 - x0) / 160;
    const ry = (y1 - y0) / 160;
    R.points.forEach(([px, py], k) => {
      const c = document.createElementNS(NS, "ellipse");
      c.setAttribute("cx", px);
      c.setAttribute("cy", flipY(py));
      c.setAttribute("rx", rx);
      c.setAttribute("ry", ry);
      c.setAttribute("fill", R.point_color[k]);
      c.setAttribute("class", "point");
      svg.appendChild(c);
    });
    probe = document.createElementNS(NS, "ellipse");
    probe.setAttribute("class", "probe");
    probe.setAttribute("rx", rx * 2.5);
    probe.setAttribute("ry", ry * 2.5);
    probe.style.display = "none";
    svg.appendChild(probe);
    svg.addEventListener("mousemove", (ev) => {
      const t = ev.target;
      if (t.tagName === "rect" && selected < 0) showDetails(Number(t.dataset.node));
    });
  }

  // -- start ----------------------------------------------------------------------------------
  build();
  buildForm();
  buildClassChoice();
  buildRegions();
  if (n > 400) fold(4);
  const slider = $("step");
  slider.max = nSteps;
  $("step-max").textContent = nSteps;
  document.querySelectorAll(".score-name").forEach((e) => { e.textContent = D.score_name; });
  if (!D.train_score) $("train-box").style.display = "none";
  if (!D.valid_score) $("valid-box").style.display = "none";
  if (D.note) {
    $("note").textContent = D.note;
    $("note").hidden = false;
    slider.disabled = true;
  }
  let pending = false;
  slider.addEventListener("input", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; applyStep(Number(slider.value)); });
  });
  slider.addEventListener("change", () => applyStep(Number(slider.value)));
  $("tree").addEventListener("mouseover", (ev) => onTree(ev, false));
  $("tree").addEventListener("click", (ev) => onTree(ev, true));
  $("expand-all").addEventListener("click", () => fold(Infinity));
  $("collapse-all").addEventListener("click", () => fold(2));
  applyStep(0);
  // for tests and scripting: the state the page shows
  // timeSteps(count): milliseconds per pruning step (page layout included) over ``count``
  // steps spread along the path, then back to step 0: the page's responsiveness, measured.
  function timeSteps(count) {
    const out = [];
    for (let k = 0; k <= nSteps; k += Math.max(1, Math.floor(nSteps / count))) {
      const t0 = performance.now();
      applyStep(k);
      void document.body.offsetHeight;
      out.push(performance.now() - t0);
    }
    applyStep(0);
    return out;
  }
  window.treelearnExplorer = { applyStep, route: (v) => route(v), shap: (v) => shap(v), timeSteps,
    get step() { return step; } };
})();

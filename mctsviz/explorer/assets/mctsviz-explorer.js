/* mctsviz explorer: a recorded search's tree at any (iteration, phase).
 *
 * Written for mctsviz (MIT); no dependencies, nothing fetched. Every text shown comes from the
 * data Python wrote (mctsviz.explorer.data): this script looks numbers up, it never formats or
 * computes a score. Text from a trace reaches the page through textContent only.
 *
 * An explorer is any element with class "mvx" and either data-mvx-source (the id of the JSON
 * script element holding the data), data-mvx-trace (a key of window.mctsvizExplorerData,
 * filled by a walkthrough's explorer-data.js) or data-mvx-api (the address of a served
 * explorer's API, mctsviz.explorer.server: the page fetches each moment it draws).
 *
 * The drawing and the panel read a model: Model holds every iteration of a trace in the page;
 * ServedModel holds one moment's folded tree, as the server answered it.
 */
(function () {
  "use strict";

  var PHASES = ["select", "expand", "simulate", "backprop"];
  var PHASE_TITLES = ["Selection", "Expansion", "Simulation", "Backpropagation"];
  var SVGNS = "http://www.w3.org/2000/svg";
  var NODE_W = 66, NODE_H = 34, GAP_X = 10, GAP_Y = 46, PAD = 24;
  var PLAY_MS = 650;
  var READABLE = 0.75; // the smallest scale at which a node's 11 px labels stay legible

  function html(tag, className, parent, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function clip(text, limit) {
    text = String(text);
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  /* -- the numbers at any moment ------------------------------------------------------------ */

  function Model(data) {
    var nodes = data.nodes, count = nodes.parent.length, i;
    this.data = data;
    this.count = count;
    this.root = 0;
    this.iterations = data.iterations;
    this.kids = [];
    for (i = 0; i < count; i++) this.kids.push([]);
    for (i = 1; i < count; i++) this.kids[nodes.parent[i]].push(i);
    // N, and the indexes into data.strings of W and the mean, and the colour's palette index.
    this.n = new Float64Array(count);
    this.w = new Int32Array(count);
    this.q = new Int32Array(count);
    this.c = new Int32Array(count);
    for (i = 0; i < count; i++) this.restoreStart(i);
    // Each update's previous update of the same node (-1: the node's start), to step backwards.
    var last = new Int32Array(count).fill(-1), prev = [], offsets = [0];
    for (var k = 0; k < data.iters.length; k++) {
      var ups = data.iters[k].up;
      for (var u = 0; u < ups.length; u++) {
        prev.push(last[ups[u][0]]);
        last[ups[u][0]] = prev.length - 1;
      }
      offsets.push(prev.length);
    }
    this.prev = Int32Array.from(prev);
    this.offsets = offsets;
    this.flat = [];
    for (k = 0; k < data.iters.length; k++) Array.prototype.push.apply(this.flat, data.iters[k].up);
    this.done = 0;
    this.moveTo(this.iterations);
    this.finalVisits = Float64Array.from(this.n);
  }

  Model.prototype.restoreStart = function (i) {
    var s = this.data.nodes.start[i];
    this.n[i] = s[0]; this.w[i] = s[1]; this.q[i] = s[2]; this.c[i] = s[3];
  };

  Model.prototype.set = function (row) {
    var i = row[0];
    this.n[i] = row[1]; this.w[i] = row[2]; this.q[i] = row[3]; this.c[i] = row[4];
  };

  /* Make the statistics those after iteration ``done``'s backpropagation. */
  Model.prototype.moveTo = function (done) {
    var g;
    while (this.done < done) {
      for (g = this.offsets[this.done]; g < this.offsets[this.done + 1]; g++) this.set(this.flat[g]);
      this.done++;
    }
    while (this.done > done) {
      for (g = this.offsets[this.done] - 1; g >= this.offsets[this.done - 1]; g--) {
        var p = this.prev[g];
        if (p < 0) this.restoreStart(this.flat[g][0]);
        else this.set(this.flat[p]);
      }
      this.done--;
    }
  };

  /* Does node i exist at (iteration k, phase p)? A node is born in its iteration's expansion. */
  Model.prototype.exists = function (i, k, p) {
    var b = this.data.nodes.born[i];
    return b < k || (b === k && p >= 1) || b === 0;
  };

  /* How many of a "+n more" marker's nodes exist at (k, p), and whether the path goes into one. */
  Model.prototype.hiddenCount = function (marker, k, p, onPath) {
    var n = 0, pathInside = false, self = this;
    marker.nodes.forEach(function (x) { if (self.exists(x, k, p)) n++; if (onPath[x]) pathInside = true; });
    return [n, pathInside];
  };

  /* -- one moment from the server ------------------------------------------------------------ */

  /* The folded tree at one moment, as mctsviz.explorer.served answers it: the drawn nodes with
     their statistics and "+n more" counts, and every node the answer names. */
  function ServedModel(data) {
    this.data = data;
    this.count = data.count;
    this.root = 0;
    this.iterations = data.iterations;
    this.kids = {};
    this.n = {}; this.w = {}; this.q = {}; this.c = {};
    this.more = {}; this.morePath = {};
    this.shape = "";
  }

  /* Take an answer; returns whether the drawn nodes or their folds changed (a new layout). */
  ServedModel.prototype.load = function (answer) {
    var t = answer.nodes, ids = t.id, nodes = { parent: {}, name: {}, action: {}, mover: {}, terminal: {}, prior: {} };
    var kids = {}, n = {}, w = {}, q = {}, c = {}, more = {}, morePath = {}, shape = [answer.root];
    for (var j = 0; j < ids.length; j++) {
      var i = ids[j];
      for (var column in nodes) nodes[column][i] = t[column][j];
    }
    for (j = 0; j < answer.drawn; j++) {
      i = ids[j];
      var s = t.stats[j];
      n[i] = s[0]; w[i] = s[1]; q[i] = s[2]; c[i] = s[3];
      more[i] = t.more[j][0]; morePath[i] = !!t.more[j][1];
      kids[i] = kids[i] || [];
      if (i !== answer.root) (kids[t.parent[j]] = kids[t.parent[j]] || []).push(i);
      shape.push(i + (more[i] ? "+" : ""));
    }
    this.data.nodes = nodes;
    this.count = answer.count;
    this.root = answer.root;
    this.kids = kids; this.n = n; this.w = w; this.q = q; this.c = c;
    this.more = more; this.morePath = morePath;
    shape = shape.join(",") + "|" + answer.links.map(String).join(";");
    var changed = shape !== this.shape;
    this.shape = shape;
    return changed;
  };

  /* The server answers with the nodes existing at the moment asked about only. */
  ServedModel.prototype.exists = function (i) { return this.n[i] !== undefined; };
  ServedModel.prototype.moveTo = function () {};
  ServedModel.prototype.hiddenCount = function (marker) { return [this.more[marker.parent] || 0, !!this.morePath[marker.parent]]; };

  /* -- which nodes are drawn, and where ------------------------------------------------------ */

  /* The budget's nodes, best first by final visits (ties by id), each with its parent. */
  function chooseNodes(model, budget) {
    var chosen = new Uint8Array(model.count), heap = [0], visits = model.finalVisits, taken = 0;
    function better(a, b) { return visits[a] > visits[b] || (visits[a] === visits[b] && a < b); }
    function push(x) {
      heap.push(x);
      for (var c = heap.length - 1; c > 0;) {
        var p = (c - 1) >> 1;
        if (!better(heap[c], heap[p])) break;
        var t = heap[c]; heap[c] = heap[p]; heap[p] = t; c = p;
      }
    }
    function pop() {
      var top = heap[0], end = heap.pop();
      if (heap.length) {
        heap[0] = end;
        for (var p = 0; ;) {
          var l = 2 * p + 1, r = l + 1, b = p;
          if (l < heap.length && better(heap[l], heap[b])) b = l;
          if (r < heap.length && better(heap[r], heap[b])) b = r;
          if (b === p) break;
          var t = heap[b]; heap[b] = heap[p]; heap[p] = t; p = b;
        }
      }
      return top;
    }
    while (heap.length && taken < budget) {
      var x = pop();
      chosen[x] = 1; taken++;
      var kids = model.kids[x];
      for (var i = 0; i < kids.length; i++) push(kids[i]);
    }
    return chosen;
  }

  /* A tidy layout of the drawn nodes (in the manner of Reingold and Tilford): each subtree is
     built with its left and right contour per depth, and a subtree is pushed right only as far
     as its contour needs to clear its left siblings'. A parent sits over its first and last
     child. In the page it depends on the whole trace and the user's folds, never on the moment
     shown, so a node keeps its place from phase to phase and from iteration to iteration. A
     served explorer lays out each answer's nodes: chosen by final visits too, most stay put. */
  function layout(model, shown, unfolded, collapsed) {
    var STEP = NODE_W + GAP_X, places = {}, markers = [], below = {}, offset = {};
    // Lays out one subtree: returns its left and right contour per depth, relative to its root,
    // and notes each child's offset from its parent (a marker's in the marker), so no subtree's
    // places are copied on the way up.
    function build(node) {
      var kids = model.kids[node] || [], drawn = [], hidden = [], i;
      if (!collapsed[node]) {
        for (i = 0; i < kids.length; i++) (!shown || shown[kids[i]] || unfolded[node] ? drawn : hidden).push(kids[i]);
      }
      var parts = drawn.map(build), owners = drawn.slice();
      // A served tree says how many children it left out; a tree in the page lists them.
      if (hidden.length || (!collapsed[node] && model.more && model.more[node])) {
        var marker = { parent: node, nodes: hidden, x: 0, y: 0, offset: 0 };
        markers.push(marker);
        parts.push({ left: [0], right: [0] });
        owners.push(marker);
      }
      below[node] = owners;
      if (!parts.length) return { left: [0], right: [0] };
      var offsets = [0], right = parts[0].right.slice();
      for (i = 1; i < parts.length; i++) {
        var part = parts[i], shift = -Infinity;
        for (var d = 0; d < Math.min(right.length, part.left.length); d++) shift = Math.max(shift, right[d] - part.left[d] + STEP);
        offsets.push(shift);
        for (d = 0; d < part.right.length; d++) right[d] = d < right.length ? Math.max(right[d], part.right[d] + shift) : part.right[d] + shift;
      }
      var centre = (offsets[0] + offsets[offsets.length - 1]) / 2;
      var leftC = [0], rightC = [0];
      parts.forEach(function (part, j) {
        var off = offsets[j] - centre, owner = owners[j];
        if (typeof owner === "number") offset[owner] = off;
        else owner.offset = off;
        for (var d = 0; d < part.left.length; d++) {
          var l = part.left[d] + off, r = part.right[d] + off;
          if (leftC.length <= d + 1) { leftC.push(l); rightC.push(r); }
          else { leftC[d + 1] = Math.min(leftC[d + 1], l); rightC[d + 1] = Math.max(rightC[d + 1], r); }
        }
      });
      return { left: leftC, right: rightC };
    }
    var tree = build(model.root), minX = Math.min.apply(null, tree.left);
    // Places from the root down: a node's x is its parent's plus its offset.
    function place(node, x, depth) {
      places[node] = { x: x - minX, y: depth * (NODE_H + GAP_Y) };
      below[node].forEach(function (owner) {
        if (typeof owner === "number") place(owner, x + offset[owner], depth + 1);
        else { owner.x = x + owner.offset - minX; owner.y = (depth + 1) * (NODE_H + GAP_Y); }
      });
    }
    place(model.root, 0, 0);
    return { places: places, markers: markers };
  }

  /* -- the explorer ------------------------------------------------------------------------- */

  function Explorer(root, data, api) {
    this.root = root;
    this.data = data;
    this.api = api || null;  // a served explorer's API: each moment is fetched from there
    this.model = this.api ? new ServedModel(data) : new Model(data);
    this.shown = this.api ? null : chooseNodes(this.model, data.budget || 250);
    this.unfolded = {};
    this.opened = [];  // served: the subtrees opened by clicking their "+n more", newest last
    this.collapsed = {};
    this.selected = null;
    this.k = 0;
    this.p = 3;
    this.timer = null;
    this.standalone = root.hasAttribute("data-mvx-hash");
    this.build();
    var start = this.readLink();
    var k = start ? start.k : parseInt(root.getAttribute("data-mvx-iteration") || "0", 10);
    var p = start ? start.p : PHASES.indexOf(root.getAttribute("data-mvx-phase") || "backprop");
    if (this.api) {  // ready once the first answer is drawn (receive)
      root.mvx = this;
      if (start && start.node !== null && start.node >= 0 && start.node < data.count) this.selected = start.node;
      this.goTo(isNaN(k) ? 0 : k, p < 0 ? 3 : p);
      return;
    }
    this.relayout();
    this.goTo(isNaN(k) ? 0 : k, p < 0 ? 3 : p);
    if (start && start.node !== null && start.node < this.model.count) this.select(start.node);
    this.focus();
    root.mvx = this;
    root.setAttribute("data-mvx-ready", "1");
  }

  Explorer.prototype.build = function () {
    var self = this, root = this.root;
    root.textContent = "";
    root.classList.add("mvx--ready");
    if (!root.hasAttribute("tabindex")) root.setAttribute("tabindex", "0");
    var bar = html("div", "mvx-bar", root);
    function button(label, title, action) {
      var b = html("button", "mvx-button", bar, label);
      b.type = "button";
      b.title = title;
      b.setAttribute("aria-label", title);
      b.addEventListener("click", action);
      return b;
    }
    button("⇤", "First iteration (Home)", function () { self.goTo(0, 3); });
    button("◀◀", "Previous iteration (Page Up)", function () { self.stepIteration(-1); });
    button("◀", "Previous phase (←)", function () { self.step(-1); });
    this.playButton = button("Play", "Play (space)", function () { self.togglePlay(); });
    this.playButton.classList.add("mvx-play");
    button("▶", "Next phase (→)", function () { self.step(1); });
    button("▶▶", "Next iteration (Page Down)", function () { self.stepIteration(1); });
    button("⇥", "Last iteration (End)", function () { self.goTo(self.model.iterations, 3); });
    this.scrubber = html("input", "mvx-scrubber", bar);
    this.scrubber.type = "range";
    this.scrubber.min = "0";
    this.scrubber.max = String(this.model.iterations);
    this.scrubber.setAttribute("aria-label", "Iteration");
    this.scrubber.addEventListener("input", function () { self.goTo(parseInt(self.scrubber.value, 10), self.k ? self.p : 3); });
    if (this.api) {
      // A served trace is long: a pixel of the scrubber spans many iterations, so a field names one.
      var field = html("input", "mvx-jump", bar);
      field.type = "number";
      field.min = "0";
      field.max = String(this.model.iterations);
      field.placeholder = "iteration";
      field.title = "Go to an iteration (Enter)";
      field.setAttribute("aria-label", "Go to iteration");
      field.addEventListener("change", function () {
        var k = parseInt(field.value, 10);
        if (!isNaN(k)) self.goTo(k, self.k ? self.p : 3);
      });
    }
    this.label = html("output", "mvx-moment", bar);
    this.label.setAttribute("aria-live", "polite");
    var phases = html("div", "mvx-phases", root);
    this.phaseButtons = PHASE_TITLES.map(function (title, i) {
      var b = html("button", "mvx-phase", phases, (i + 1) + ". " + title);
      b.type = "button";
      b.addEventListener("click", function () { self.goTo(Math.max(self.k, 1), i); });
      return b;
    });
    var zoom = html("div", "mvx-zoom", phases);
    [["+", "Zoom in", 1.25], ["−", "Zoom out", 0.8]].forEach(function (z) {
      var b = html("button", "mvx-button", zoom, z[0]);
      b.type = "button"; b.title = z[1]; b.setAttribute("aria-label", z[1]);
      b.addEventListener("click", function () { self.zoomBy(z[2]); });
    });
    var fit = html("button", "mvx-button", zoom, "Fit");
    fit.type = "button"; fit.title = "Fit the tree in view";
    fit.addEventListener("click", function () { self.fit(); });

    this.phaseText = html("p", "mvx-phase-text", root);
    this.key(root);
    var body = html("div", "mvx-body", root);
    var stage = html("div", "mvx-stage", body);
    this.stage = stage;
    this.svg = svg("svg", { class: "mvx-svg", role: "img", "aria-label": "The search tree" }, stage);
    this.view = svg("g", { class: "mvx-view" }, this.svg);
    this.edgeLayer = svg("g", { class: "mvx-edges" }, this.view);
    this.nodeLayer = svg("g", { class: "mvx-nodes" }, this.view);
    this.zoomState = { x: PAD, y: PAD, s: 1 };
    this.installPanZoom();
    this.panel = html("div", "mvx-panel", body);
    // A file of its own takes the keys page-wide; in a walkthrough, once the explorer has focus
    // (the page's own arrow keys turn its pages).
    (this.standalone ? document : root).addEventListener("keydown", function (e) { self.onKey(e); });
    if (this.standalone) {
      window.addEventListener("hashchange", function () {
        var link = self.readLink();
        if (link) { self.goTo(link.k, link.p); if (link.node !== null) self.select(link.node); }
      });
    }
    // A page's "show this phase" buttons move the explorer and bring it into view.
    if (!this.standalone) {
      document.addEventListener("click", function (e) {
        var go = e.target.closest ? e.target.closest("[data-mvx-goto]") : null;
        if (!go || document.querySelector(".mvx") !== root) return;
        var phase = PHASES.indexOf(go.getAttribute("data-mvx-goto"));
        self.goTo(self.k || 1, phase < 0 ? 0 : phase);
        root.scrollIntoView({ block: "start" });
      });
    }
    // Rows of the page's own tables name their node: clicking one selects it here.
    var scope = this.standalone ? root : document;
    scope.addEventListener("click", function (e) {
      var t = e.target.closest ? e.target.closest("[data-mv-node]") : null;
      var row = t || (e.target.closest ? e.target.closest("tr") : null);
      if (row && !t) t = row.querySelector("[data-mv-node]");
      if (t && !root.contains(t)) self.select(parseInt(t.getAttribute("data-mv-node"), 10));
    });
  };

  Explorer.prototype.key = function (root) {
    var d = this.data, key = html("div", "mvx-key", root);
    html("span", "mvx-key__label", key, "mean " + d.scale[0]);
    var ramp = html("span", "mvx-key__ramp", key);
    d.palette.forEach(function (c) { var s = html("span", "", ramp); s.style.background = c; });
    html("span", "mvx-key__label", key, String(d.scale[1]));
    [["path", "path"], ["new", "new node"], ["sim", "simulated"], ["updated", "updated"]].forEach(function (k) {
      var item = html("span", "mvx-key__item", key);
      html("span", "mvx-key__swatch mvx-key__swatch--" + k[0], item);
      html("span", "", item, k[1]);
    });
  };

  /* -- moments ------------------------------------------------------------------------------- */

  /* Show the moment (k, p); ``direction`` (1 or -1: a step) lets a served explorer fetch the
     moment after it ahead of time. */
  Explorer.prototype.goTo = function (k, p, direction) {
    var m = this.model;
    k = Math.max(0, Math.min(m.iterations, k | 0));
    p = k === 0 ? 3 : Math.max(0, Math.min(3, p | 0));
    this.k = k;
    this.p = p;
    this.direction = direction || 0;
    if (this.api) { this.fetchMoment(); return; }
    m.moveTo(p === 3 ? k : k - 1);
    this.draw();
    this.writeLink();
  };

  /* Served: ask for the moment (k, p) with the opened subtrees and the selected node. One
     request at a time; a moment asked for meanwhile (keys held down, the scrubber dragged) is
     fetched when it returns, and the answers in between are dropped. */
  Explorer.prototype.fetchMoment = function () {
    if (this.inFlight) { this.stale = true; return; }
    var self = this, query = this.query(this.k, this.p), ahead = this.ahead || {};
    // An answer fetched ahead (the moment a step would show next) is used, arrived or not.
    var answer = ahead.query === query ? ahead.answer : this.ask(query);
    this.ahead = null;
    this.inFlight = true;
    this.stale = false;
    this.root.setAttribute("aria-busy", "true");
    answer.then(function (res) {
      self.inFlight = false;
      if (self.stale) { self.fetchMoment(); return; }
      self.root.removeAttribute("aria-busy");
      if (!res.ok) { self.showError(res.body && res.body.error); return; }
      self.receive(res.body);
      // Stepping goes on in the same direction, mostly: ask for the moment after this one now.
      var next = self.direction ? self.neighbour(self.k, self.p, self.direction) : null;
      if (next) {
        var later = self.query(next[0], next[1]);
        self.ahead = { query: later, answer: self.ask(later) };
      }
    });
  };

  /* The API's query for the moment (k, p) as the page stands (its opened folds, its selection). */
  Explorer.prototype.query = function (k, p) {
    var query = "tree?i=" + k + "&p=" + PHASES[p] + "&n=" + (this.data.budget || 250);
    if (this.opened.length) query += "&open=" + this.opened.join(",");
    if (this.selected !== null) query += "&pin=" + this.selected;
    return query;
  };

  /* A promise of {ok, body}: the server's JSON answer, or an error as the server would word it. */
  Explorer.prototype.ask = function (query) {
    return fetch(this.api + query, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .catch(function (err) { return { ok: false, body: { error: "the server does not answer (" + (err && err.message) + ")" } }; });
  };

  /* Served: draw an answer (see mctsviz/explorer/served.py for its shape). */
  Explorer.prototype.receive = function (answer) {
    var d = this.data;
    d.strings = answer.strings;
    d.links = answer.links;
    d.iters = {};
    if (answer.iter) d.iters[answer.iteration - 1] = answer.iter;
    this.root.removeAttribute("data-mvx-error");
    if (this.model.load(answer) || !this.places) this.relayout();
    this.draw();
    this.writeLink();
    this.markRows();
    if (!this.root.hasAttribute("data-mvx-ready")) {
      this.focus();
      this.root.setAttribute("data-mvx-ready", "1");
    }
  };

  Explorer.prototype.showError = function (message) {
    this.phaseText.textContent = "The explorer's server answered: " + (message || "an error");
    this.root.setAttribute("data-mvx-error", "1");
    if (!this.root.hasAttribute("data-mvx-ready")) this.root.setAttribute("data-mvx-ready", "1");
  };

  Explorer.prototype.step = function (delta) {
    var next = this.neighbour(this.k, this.p, delta);
    if (!next) { this.stop(); return false; }
    this.goTo(next[0], next[1], delta);
    return true;
  };

  /* The moment one phase after (delta 1) or before (-1) (k, p); null past the last. */
  Explorer.prototype.neighbour = function (k, p, delta) {
    p += delta;
    if (k === 0 && delta > 0) { k = 1; p = 0; }
    else if (p > 3) { k += 1; p = 0; }
    else if (p < 0) { k -= 1; p = 3; }
    if (k > this.model.iterations || k < 0) return null;
    return [k, k === 0 ? 3 : p];
  };

  Explorer.prototype.stepIteration = function (delta) {
    this.goTo(this.k + delta, this.k + delta === 0 ? 3 : this.p);
  };

  Explorer.prototype.togglePlay = function () {
    if (this.timer) { this.stop(); return; }
    var self = this;
    if (this.k === this.model.iterations && this.p === 3) this.goTo(0, 3);
    this.playButton.textContent = "Pause";
    this.playButton.title = "Pause (space)";
    this.timer = setInterval(function () { if (!self.step(1)) self.stop(); }, PLAY_MS);
  };

  Explorer.prototype.stop = function () {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = "Play";
    this.playButton.title = "Play (space)";
  };

  Explorer.prototype.onKey = function (e) {
    if (e.target && /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) && e.target !== this.scrubber) return;
    var handled = true;
    switch (e.key) {
      case "ArrowRight": this.step(1); break;
      case "ArrowLeft": this.step(-1); break;
      case "PageDown": this.stepIteration(1); break;
      case "PageUp": this.stepIteration(-1); break;
      case "Home": this.goTo(0, 3); break;
      case "End": this.goTo(this.model.iterations, 3); break;
      case " ": this.togglePlay(); break;
      default: handled = false;
    }
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  };

  /* A deep link: #i=12&p=expand&n=5 (standalone files only; pages choose their moment). */
  Explorer.prototype.readLink = function () {
    if (!location.hash) return null;
    if (!this.standalone) {
      // A walkthrough's links to its slider page name an iteration: slider.html#iteration-12.
      var named = /^#iteration-(\d+)$/.exec(location.hash);
      return named ? { k: parseInt(named[1], 10), p: 0, node: null } : null;
    }
    var params = {};
    location.hash.slice(1).split("&").forEach(function (part) {
      var kv = part.split("=");
      params[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1] || "");
    });
    if (!("i" in params)) return null;
    var k = parseInt(params.i, 10), p = PHASES.indexOf(params.p || "backprop"), n = parseInt(params.n, 10);
    return { k: isNaN(k) ? 0 : k, p: p < 0 ? 3 : p, node: isNaN(n) ? null : n };
  };

  Explorer.prototype.writeLink = function () {
    if (!this.standalone || !history.replaceState) return;
    var self = this;
    function write() {
      self.linkTimer = null;
      var hash = "#i=" + self.k + "&p=" + PHASES[self.p] + (self.selected !== null ? "&n=" + self.selected : "");
      try { history.replaceState(null, "", hash); } catch (err) { /* file:// in some browsers */ }
    }
    // A served step is a round trip already: the address (several ms in Chromium) follows
    // once stepping pauses.
    if (!this.api) { write(); return; }
    if (this.linkTimer) clearTimeout(this.linkTimer);
    this.linkTimer = setTimeout(write, 120);
  };

  /* -- drawing ------------------------------------------------------------------------------- */

  /* Place the drawn nodes, their edges and folds. Elements are kept by node from one layout to
     the next (a served step moves a few nodes, adds or drops a few): only what changed is made,
     moved or removed. */
  Explorer.prototype.relayout = function () {
    var m = this.model, self = this;
    var lay = layout(m, this.shown, this.unfolded, this.collapsed);
    this.places = lay.places;
    this.markers = lay.markers;
    var oldNodes = this.nodeEls || {}, oldEdges = this.edgeEls || {}, oldFolds = this.foldEls || {};
    this.nodeEls = {};
    this.edgeEls = {};
    this.foldEls = {};
    function line(key, className, a, b) {
      var e = oldEdges[key];
      if (e) delete oldEdges[key];
      else e = svg("line", { class: className }, self.edgeLayer);
      place(e, a, b);
      self.edgeEls[key] = e;
      return e;
    }
    // Attributes are written only when they change: most places stay from one layout to the next.
    function place(e, a, b) {
      var at = a.x + "," + a.y + "," + b.x + "," + b.y;
      if (e.mvxAt === at) return;
      e.mvxAt = at;
      e.setAttribute("x1", a.x + NODE_W / 2); e.setAttribute("y1", a.y + NODE_H);
      e.setAttribute("x2", b.x + NODE_W / 2); e.setAttribute("y2", b.y);
    }
    function move(g, at) {
      var transform = "translate(" + at.x + "," + at.y + ")";
      if (g.mvxAt !== transform) g.setAttribute("transform", g.mvxAt = transform);
    }
    Object.keys(lay.places).forEach(function (key) {
      var i = +key, at = lay.places[key], el = oldNodes[key];
      if (i !== m.root) line(key, "mvx-edge", lay.places[m.data.nodes.parent[i]], at);
      if (el) delete oldNodes[key];
      else el = self.makeNode(i);
      move(el.g, at);
      if (el.collapsed !== !!self.collapsed[i]) el.g.classList.toggle("mvx-collapsed", el.collapsed = !!self.collapsed[i]);
      self.nodeEls[i] = el;
    });
    this.data.links.forEach(function (link) {
      var a = lay.places[link[0]], b = lay.places[link[1]];
      if (a && b) line("link-" + link[0] + "-" + link[1], "mvx-edge mvx-link", a, b).setAttribute("data-born", link[2]);
    });
    this.markerEls = this.markers.map(function (mk) {
      var fold = oldFolds[mk.parent];
      if (fold) delete oldFolds[mk.parent];
      else fold = self.makeFold(mk.parent);
      place(fold.line, lay.places[mk.parent], mk);
      move(fold.g, mk);
      fold.mk = mk;
      self.foldEls[mk.parent] = fold;
      return fold;
    });
    var key;
    for (key in oldNodes) oldNodes[key].g.remove();
    for (key in oldEdges) oldEdges[key].remove();
    for (key in oldFolds) { oldFolds[key].g.remove(); oldFolds[key].line.remove(); }
  };

  Explorer.prototype.makeNode = function (i) {
    var self = this, d = this.data;
    var g = svg("g", { class: "mvx-node", "data-node": i, tabindex: "-1" }, this.nodeLayer);
    svg("rect", { class: "mvx-box", width: NODE_W, height: NODE_H, rx: 6 }, g);
    var t1 = svg("text", { class: "mvx-label", x: NODE_W / 2, y: 14 }, g);
    t1.textContent = clip(i === 0 ? "root" : (d.players === 1 ? d.nodes.name[i] : d.nodes.action[i]), 10);
    var t2 = svg("text", { class: "mvx-stats", x: NODE_W / 2, y: 28 }, g);
    svg("title", {}, g).textContent = d.nodes.name[i];
    g.addEventListener("click", function (e) { e.stopPropagation(); self.select(i); });
    g.addEventListener("dblclick", function (e) { e.stopPropagation(); self.toggleCollapse(i); });
    return { g: g, stats: t2 };
  };

  /* A "+n more" node under ``parent``: a click opens the children it stands for. */
  Explorer.prototype.makeFold = function (parent) {
    var self = this;
    var line = svg("line", { class: "mvx-edge mvx-edge--fold" }, this.edgeLayer);
    var g = svg("g", { class: "mvx-fold", "data-parent": parent }, this.nodeLayer);
    svg("rect", { class: "mvx-box", width: NODE_W, height: NODE_H, rx: 17 }, g);
    var t = svg("text", { class: "mvx-label", x: NODE_W / 2, y: 21 }, g);
    g.addEventListener("click", function (e) { e.stopPropagation(); self.unfold(parent); });
    return { g: g, text: t, line: line, mk: null };
  };

  Explorer.prototype.unfold = function (parent) {
    if (this.api) {
      this.opened = this.opened.filter(function (x) { return x !== parent; }).concat([parent]).slice(-32);
      this.fetchMoment();
      return;
    }
    this.unfolded[parent] = true;
    this.relayout();
    this.draw();
  };

  Explorer.prototype.toggleCollapse = function (node) {
    if (!(this.model.kids[node] || []).length) return;
    if (this.collapsed[node]) delete this.collapsed[node];
    else this.collapsed[node] = true;
    this.relayout();
    this.draw();
  };

  Explorer.prototype.draw = function () {
    var m = this.model, d = this.data, k = this.k, p = this.p;
    var it = k ? d.iters[k - 1] : null;
    var onPath = {}, isNew = {}, updated = {}, pathEdges = {};
    if (it) {
      it.path.forEach(function (n, j) { onPath[n] = true; if (j) pathEdges[n] = it.path[j - 1]; });
      if (p >= 1) it.new.forEach(function (n) { isNew[n] = true; });
      if (p === 3) it.up.forEach(function (u) { updated[u[0]] = true; });
    }
    var palette = d.palette, S = d.strings;
    for (var key in this.nodeEls) {
      var i = +key, el = this.nodeEls[key], g = el.g;
      var here = m.exists(i, k, p), edge = this.edgeEls[i];
      g.classList.toggle("mvx-hidden", !here);
      if (edge) {
        edge.classList.toggle("mvx-hidden", !here);
        edge.classList.toggle("mvx-on-path", here && pathEdges[i] !== undefined);
      }
      if (!here) { g.classList.remove("mvx-on-path", "mvx-new", "mvx-sim", "mvx-updated", "mvx-selected"); continue; }
      // Written only when changed: a step changes a path's worth of nodes, not the whole tree.
      var fill = m.c[i] < 0 ? "#ffffff" : palette[m.c[i]], stats = m.n[i] + " · " + S[m.w[i]];
      if (el.fill !== fill) {
        el.fill = fill;
        g.firstChild.style.fill = fill;
        g.classList.toggle("mvx-dark", luminance(fill) < 0.35);
      }
      if (el.text !== stats) el.stats.textContent = el.text = stats;
      g.classList.toggle("mvx-on-path", !!onPath[i]);
      g.classList.toggle("mvx-new", !!isNew[i]);
      g.classList.toggle("mvx-sim", !!(it && p >= 2 && it.sim === i));
      g.classList.toggle("mvx-updated", !!updated[i]);
      g.classList.toggle("mvx-selected", this.selected === i);
    }
    for (var e in this.edgeEls) {
      if (e.indexOf("link-") !== 0) continue;
      var link = this.edgeEls[e], born = +link.getAttribute("data-born");
      link.classList.toggle("mvx-hidden", !(born < k || (born === k && p >= 1) || born === 0));
    }
    var self = this;
    this.markerEls.forEach(function (mk) {
      var counted = m.hiddenCount(mk.mk, k, p, onPath), n = counted[0], pathInside = counted[1];
      var visible = n > 0 && m.exists(mk.mk.parent, k, p);
      mk.g.classList.toggle("mvx-hidden", !visible);
      mk.line.classList.toggle("mvx-hidden", !visible);
      mk.g.classList.toggle("mvx-on-path", pathInside);
      mk.line.classList.toggle("mvx-on-path", pathInside);
      if (mk.count !== n) {
        mk.count = n;
        mk.text.textContent = "+" + n + " more";
        mk.g.setAttribute("aria-label", n + " more children of " + d.nodes.name[mk.mk.parent] + ": click to show");
      }
    });
    this.scrubber.value = String(k);
    this.label.textContent = k === 0 ? "Before iteration 1" : "Iteration " + k + " of " + m.iterations + " · " + PHASE_TITLES[p];
    this.phaseButtons.forEach(function (b, i) {
      b.classList.toggle("mvx-phase--current", k > 0 && i === p);
      b.setAttribute("aria-pressed", String(k > 0 && i === p));
    });
    this.phaseText.textContent = it ? S[it.text[p]] : "The tree before the first iteration. " + d.legend + ".";
    this.root.setAttribute("data-mvx-moment", k + ":" + PHASES[p]);
    self.fillPanel();
  };

  function luminance(hex) {
    if (hex.charAt(0) !== "#" || hex.length !== 7) return 1;
    var c = [1, 3, 5].map(function (j) { return parseInt(hex.substr(j, 2), 16) / 255; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }

  /* -- the panel: the selected node, and this phase's table ---------------------------------- */

  Explorer.prototype.select = function (node) {
    if (this.api) {
      if (!(node >= 0 && node < this.data.count)) return;
      this.selected = node;
      if (this.places && this.places[node] && !this.inFlight) { this.draw(); this.writeLink(); this.markRows(); }
      else this.fetchMoment();  // the server draws the way to it (pin)
      return;
    }
    if (!(node >= 0 && node < this.model.count)) return;
    this.selected = node;
    // A node behind a fold or a collapsed ancestor is brought into view.
    var chain = [], x = node, nodes = this.data.nodes;
    while (x > 0) { chain.push(x); x = nodes.parent[x]; }
    var changed = false, self = this;
    chain.forEach(function (c) {
      if (!self.places[c]) { self.unfolded[nodes.parent[c]] = true; changed = true; }
      if (self.collapsed[nodes.parent[c]]) { delete self.collapsed[nodes.parent[c]]; changed = true; }
    });
    if (changed) this.relayout();
    this.draw();
    this.writeLink();
    this.markRows();
  };

  /* The page's rows naming the selected node are highlighted. */
  Explorer.prototype.markRows = function () {
    var page = document.querySelectorAll("[data-mv-node]"), node = this.selected;
    for (var i = 0; i < page.length; i++) {
      var row = page[i].closest("tr") || page[i];
      row.classList.toggle("mvx-row--selected", +page[i].getAttribute("data-mv-node") === node);
    }
  };

  /* The written formula of one score row (a template from Python, slots filled with its texts). */
  Explorer.prototype.formula = function (step, r) {
    var d = this.data, S = d.strings;
    var slots = { name: d.nodes.name[r[0]], n: S[r[1]], w: S[r[2]], exploit: S[r[3]], explore: S[r[4]], score: S[r[5]], p: S[r[7]], N: S[step[1]], log: S[step[3]] };
    return d.templates[r[8]].replace(/\{(\w+)\}/g, function (all, slot) {
      return Object.prototype.hasOwnProperty.call(slots, slot) ? slots[slot] : all;
    });
  };

  /* This moment's scored choices: the selection steps, then (from the expansion on) the pick
     among new children. Each is [parent, its N, chosen, the logarithm, rows]. */
  Explorer.prototype.choices = function () {
    var it = this.k ? this.data.iters[this.k - 1] : null;
    if (!it) return [];
    var all = it.steps.slice();
    if (this.p >= 1 && it.exp) all.push(it.exp);
    return all;
  };

  Explorer.prototype.fillPanel = function () {
    var panel = this.panel, d = this.data, S = d.strings, m = this.model, node = this.selected, self = this;
    panel.textContent = "";
    var it = this.k ? d.iters[this.k - 1] : null, choices = this.choices();
    if (node !== null && m.exists(node, this.k, this.p)) {
      var box = html("section", "mvx-node-panel", panel);
      html("h3", "mvx-node-name", box, d.nodes.name[node]);
      var dl = html("dl", "mvx-facts", box);
      var facts = [["moved by", "mover", d.nodes.mover[node]], ["N (visits)", "n", String(m.n[node])], ["W (total reward)", "w", S[m.w[node]]], ["mean W/N", "mean", S[m.q[node]]], ["prior P", "prior", d.nodes.prior[node]]];
      if (d.nodes.terminal[node]) facts.push(["terminal", "terminal", "yes: the game ends here"]);
      facts.forEach(function (f) {
        html("dt", "", dl, f[0]);
        html("dd", "mvx-fact-" + f[1], dl, f[2]);
      });
      var written = 0;
      choices.forEach(function (step) {
        step[4].forEach(function (r) {
          if (r[0] !== node) return;
          html("p", "mvx-formula" + (r[9] ? " mvx-formula--chosen" : ""), box, self.formula(step, r) + (r[9] ? " (chosen)" : ""));
          written++;
        });
      });
      if (!written && it && node !== 0) {
        var parent = d.nodes.parent[node];
        html("p", "mvx-note", box, "Not scored at iteration " + this.k + ": " + (it.path.indexOf(parent) >= 0
          ? "selection stopped at " + d.nodes.name[parent] + ", so its children were not compared."
          : "its parent was not on the selection path."));
      }
    } else if (node !== null) {
      html("p", "mvx-note", panel, d.nodes.name[node] + " does not exist yet at this moment.");
    } else {
      html("p", "mvx-note", panel, "Click a node for its numbers and its selection formula.");
    }
    // A walkthrough page has these tables in its text already; a file of its own shows them here.
    if (!it || !this.standalone) return;
    if (this.p <= 1) {
      it.steps.forEach(function (step, j) {
        self.scoreTable(panel, "Step " + (j + 1) + ": the children of " + d.nodes.name[step[0]] + " (N = " + S[step[1]] + ")", step[4]);
      });
      if (this.p === 1 && it.exp) self.scoreTable(panel, "The child to simulate, among the new children of " + d.nodes.name[it.exp[0]], it.exp[4]);
    } else if (this.p === 3) {
      var table = this.table(panel, "Backpropagation: the statistics after it", ["node", "N", "W", "mean"]);
      it.up.forEach(function (u) { self.row(table, u[0], [d.nodes.name[u[0]], String(u[1]), S[u[2]], S[u[3]]], false); });
    }
  };

  Explorer.prototype.table = function (panel, caption, heads) {
    var table = html("table", "mvx-table", panel);
    html("caption", "", table, caption);
    var tr = html("tr", "", html("thead", "", table));
    heads.forEach(function (h) { html("th", "", tr, h); });
    return html("tbody", "", table);
  };

  Explorer.prototype.row = function (body, node, cells, chosen) {
    var tr = html("tr", chosen ? "mvx-row--chosen" : "", body), self = this;
    cells.forEach(function (c, j) {
      var td = html("td", "", tr, c);
      if (j === 0) td.setAttribute("data-mv-node", String(node));
    });
    if (node === this.selected) tr.classList.add("mvx-row--selected");
    tr.addEventListener("click", function () { self.select(node); });
  };

  Explorer.prototype.scoreTable = function (panel, caption, rows) {
    var d = this.data, S = d.strings, self = this;
    var body = this.table(panel, caption, d.policy === "PUCT" ? ["child", "P", "n", "W", "Q", "U", "PUCT"] : ["child", "n", "W", "W/n", "explore", d.policy]);
    rows.forEach(function (r) {
      var cells = d.policy === "PUCT" ? [d.nodes.name[r[0]], S[r[6]], S[r[1]], S[r[2]], S[r[3]], S[r[4]], S[r[5]]] : [d.nodes.name[r[0]], S[r[1]], S[r[2]], S[r[3]], S[r[4]], S[r[5]]];
      if (r[9]) cells[cells.length - 1] += " ✔";
      self.row(body, r[0], cells, !!r[9]);
    });
  };

  /* -- pan and zoom ------------------------------------------------------------------------- */

  Explorer.prototype.applyZoom = function () {
    var z = this.zoomState;
    this.view.setAttribute("transform", "translate(" + z.x.toFixed(1) + "," + z.y.toFixed(1) + ") scale(" + z.s.toFixed(4) + ")");
  };

  Explorer.prototype.zoomBy = function (factor, cx, cy) {
    var z = this.zoomState, rect = this.svg.getBoundingClientRect();
    if (cx === undefined) { cx = rect.width / 2; cy = rect.height / 2; }
    var s = Math.max(0.05, Math.min(4, z.s * factor));
    z.x = cx - (cx - z.x) * s / z.s;
    z.y = cy - (cy - z.y) * s / z.s;
    z.s = s;
    this.applyZoom();
  };

  /* Fit the nodes that exist now (or the whole tree) into view, never above natural size. */
  Explorer.prototype.fit = function () {
    var rect = this.svg.getBoundingClientRect(), m = this.model, k = this.k, p = this.p;
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (var key in this.places) {
      if (!m.exists(+key, k, p)) continue;
      var at = this.places[key];
      x0 = Math.min(x0, at.x); y0 = Math.min(y0, at.y);
      x1 = Math.max(x1, at.x + NODE_W); y1 = Math.max(y1, at.y + NODE_H);
    }
    if (!isFinite(x0)) return;
    var width = rect.width || 600, height = rect.height || 400;
    var s = Math.min(1.4, (width - 2 * PAD) / (x1 - x0 || 1), (height - 2 * PAD) / (y1 - y0 || 1));
    s = Math.max(0.05, s);
    this.zoomState = { s: s, x: (width - (x1 - x0) * s) / 2 - x0 * s, y: PAD - y0 * s };
    this.applyZoom();
  };

  /* The opening view: the whole tree if it is readable so, else readable and centred on the
     end of this iteration's path (where the search is working). */
  Explorer.prototype.focus = function () {
    this.fit();
    if (this.zoomState.s >= READABLE) return;
    var rect = this.svg.getBoundingClientRect(), it = this.k ? this.data.iters[this.k - 1] : null;
    var target = this.model.root, path = it ? it.path : [target];
    for (var j = path.length - 1; j >= 0; j--) if (this.places[path[j]]) { target = path[j]; break; }
    var at = this.places[target], s = READABLE, width = rect.width || 600;
    // Keep the root in view too when the path's two ends fit side by side.
    var x = at.x + NODE_W / 2, rootX = this.places[this.model.root].x + NODE_W / 2;
    if (Math.abs(rootX - x) * s < width - 2 * NODE_W) x = (x + rootX) / 2;
    this.zoomState = { s: s, x: width / 2 - x * s, y: PAD };
    this.applyZoom();
  };

  Explorer.prototype.installPanZoom = function () {
    var self = this, dragging = null, standalone = this.standalone;
    this.svg.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      dragging = { x: e.clientX, y: e.clientY, zx: self.zoomState.x, zy: self.zoomState.y, moved: false };
    });
    window.addEventListener("pointermove", function (e) {
      if (!dragging) return;
      var dx = e.clientX - dragging.x, dy = e.clientY - dragging.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) dragging.moved = true;
      if (!dragging.moved) return;
      self.zoomState.x = dragging.zx + dx;
      self.zoomState.y = dragging.zy + dy;
      self.applyZoom();
    });
    window.addEventListener("pointerup", function () { dragging = null; });
    // In a page the wheel scrolls the page unless Ctrl is held; in a file of its own it zooms.
    this.svg.addEventListener("wheel", function (e) {
      if (!standalone && !e.ctrlKey) return;
      e.preventDefault();
      var rect = self.svg.getBoundingClientRect();
      self.zoomBy(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - rect.left, e.clientY - rect.top);
    }, { passive: false });
  };

  /* -- start --------------------------------------------------------------------------------- */

  function dataFor(root) {
    var id = root.getAttribute("data-mvx-source");
    if (id) {
      var holder = document.getElementById(id);
      return holder ? JSON.parse(holder.textContent) : null;
    }
    var name = root.getAttribute("data-mvx-trace"), store = window.mctsvizExplorerData || {};
    return Object.prototype.hasOwnProperty.call(store, name) ? store[name] : null;
  }

  /* A served explorer starts from the trace's meta data (heading, templates, colours). */
  function startServed(root, api) {
    root.setAttribute("data-mvx-starting", "1");
    fetch(api + "meta", { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (meta) { new Explorer(root, meta, api); })
      .catch(function (err) { root.textContent = "The explorer's server does not answer (" + (err && err.message) + ")."; });
  }

  function start() {
    var roots = document.querySelectorAll(".mvx:not([data-mvx-ready]):not([data-mvx-starting])");
    for (var i = 0; i < roots.length; i++) {
      var api = roots[i].getAttribute("data-mvx-api");
      if (api !== null) { startServed(roots[i], api); continue; }
      var data = dataFor(roots[i]);
      if (!data) { roots[i].textContent = "The explorer's data did not load."; continue; }
      new Explorer(roots[i], data);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  window.mctsvizExplorer = { start: start };
})();

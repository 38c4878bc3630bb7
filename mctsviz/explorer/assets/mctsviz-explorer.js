/* mctsviz explorer: a recorded search's tree at any (iteration, phase).
 *
 * Written for mctsviz (MIT); no dependencies, nothing fetched. Every text shown comes from the
 * data Python wrote (mctsviz.explorer.data): this script looks numbers up, it never formats or
 * computes a score, and it draws boards from the cells Python sent (it knows no game's rules).
 * Text from a trace reaches the page through textContent only.
 *
 * An explorer is any element with class "mvx" and either data-mvx-source (the id of the JSON
 * script element holding the data), data-mvx-trace (a key of window.mctsvizExplorerData,
 * filled by a walkthrough's explorer-data.js) or data-mvx-api (the address of a served
 * explorer's API, mctsviz.explorer.server: the page fetches each moment it draws).
 *
 * The drawing and the panel read a model: Model holds every iteration of a trace in the page;
 * ServedModel holds one moment's folded tree, as the server answered it. The tree drawn is the
 * tree as it stands at the iteration shown; the camera follows the iteration's own nodes.
 *
 * For tests (docs/explorer.md): the root carries data-iteration and data-phase, each drawn node
 * data-node and data-role, the stage data-stage.
 */
// @ts-check
(function () {
  "use strict";

  var PHASES = ["select", "expand", "simulate", "backprop"];
  var PHASE_TITLES = ["Selection", "Expansion", "Simulation", "Backpropagation"];
  var SVGNS = "http://www.w3.org/2000/svg";
  var NODE_W = 84, NODE_H = 38, GAP_X = 12, GAP_Y = 44, PAD = 24;
  var LABEL_PX = 12;           // the node labels' font size at zoom 1 (the stylesheet's .mvx-label)
  var MIN_SCALE = 10 / LABEL_PX; // the smallest zoom the camera takes by itself: labels of 10 CSS px
  var MAX_SCALE = 1.3;         // the largest zoom it takes by itself
  var GLIDE_MS = 250;          // how long nodes glide to their places between iterations
  var PHASE_MS = 650;          // Play, phase by phase
  /** Play's speeds: iterations a second (0: phase by phase; Infinity: to the end). */
  var SPEEDS = [0, 1, 10, 100, 1000, Infinity];
  var SPEED_NAMES = ["phase by phase", "1 iteration/s", "10 iterations/s", "100 iterations/s", "1,000 iterations/s", "to the end"];

  /**
   * @param {string} tag @param {string} className @param {Element|null} parent @param {string} [text]
   * @returns {any}
   */
  function html(tag, className, parent, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  /** @param {string} tag @param {Object<string, any>} attrs @param {Element|null} parent @returns {any} */
  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  /** @param {any} text @param {number} limit */
  function clip(text, limit) {
    text = String(text);
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  /* Each kind of row's places by name ({up: {node: 0, n: 1, ...}, ...}), from the data's
     ``fields`` (mctsviz.explorer.data.FIELDS): no place is a bare number here. */
  /** @param {Object<string, string[]>} fields @returns {Object<string, Object<string, number>>} */
  function fieldIndex(fields) {
    /** @type {Object<string, Object<string, number>>} */
    var out = {};
    Object.keys(fields).forEach(function (kind) {
      out[kind] = {};
      fields[kind].forEach(function (name, i) { out[kind][name] = i; });
    });
    return out;
  }

  function reducedMotion() {
    return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  /* -- the numbers at any moment ------------------------------------------------------------ */

  /** @constructor @param {any} data @param {Object<string, Object<string, number>>} f */
  function Model(data, f) {
    var nodes = data.nodes, count = nodes.parent.length, i;
    this.data = data;
    this.f = f;
    this.count = count;
    this.root = 0;
    this.iterations = data.iterations;
    /** @type {number[][]} */
    this.kids = [];
    for (i = 0; i < count; i++) this.kids.push([]);
    for (i = 1; i < count; i++) this.kids[nodes.parent[i]].push(i);
    // N, and the indexes into data.strings of W, the mean and the box label, and the colour's
    // palette index.
    this.n = new Float64Array(count);
    this.w = new Int32Array(count);
    this.q = new Int32Array(count);
    this.c = new Int32Array(count);
    this.b = new Int32Array(count);
    for (i = 0; i < count; i++) this.restoreStart(i);
    // Each update's previous update of the same node (-1: the node's start), to step backwards.
    var last = new Int32Array(count).fill(-1), prev = [], offsets = [0], at = f.up.node;
    for (var k = 0; k < data.iters.length; k++) {
      var ups = data.iters[k].up;
      for (var u = 0; u < ups.length; u++) {
        prev.push(last[ups[u][at]]);
        last[ups[u][at]] = prev.length - 1;
      }
      offsets.push(prev.length);
    }
    this.prev = Int32Array.from(prev);
    this.offsets = offsets;
    /** @type {number[][]} */
    this.flat = [];
    for (k = 0; k < data.iters.length; k++) Array.prototype.push.apply(this.flat, data.iters[k].up);
    this.done = 0;
  }

  Model.prototype.restoreStart = function (/** @type {number} */ i) {
    var s = this.data.nodes.start[i], f = this.f.stats;
    this.n[i] = s[f.n]; this.w[i] = s[f.w]; this.q[i] = s[f.mean]; this.c[i] = s[f.colour]; this.b[i] = s[f.box];
  };

  Model.prototype.set = function (/** @type {number[]} */ row) {
    var f = this.f.up, i = row[f.node];
    this.n[i] = row[f.n]; this.w[i] = row[f.w]; this.q[i] = row[f.mean]; this.c[i] = row[f.colour]; this.b[i] = row[f.box];
  };

  /* Make the statistics those after iteration ``done``'s backpropagation. */
  Model.prototype.moveTo = function (/** @type {number} */ done) {
    var g, at = this.f.up.node;
    while (this.done < done) {
      for (g = this.offsets[this.done]; g < this.offsets[this.done + 1]; g++) this.set(this.flat[g]);
      this.done++;
    }
    while (this.done > done) {
      for (g = this.offsets[this.done] - 1; g >= this.offsets[this.done - 1]; g--) {
        var p = this.prev[g];
        if (p < 0) this.restoreStart(this.flat[g][at]);
        else this.set(this.flat[p]);
      }
      this.done--;
    }
  };

  /* Does node i exist at (iteration k, phase p)? A node is born in its iteration's expansion. */
  Model.prototype.exists = function (/** @type {number} */ i, /** @type {number} */ k, /** @type {number} */ p) {
    var b = this.data.nodes.born[i];
    return b < k || (b === k && p >= 1) || b === 0;
  };

  /* Is node i part of the tree at the end of iteration k (the tree laid out for k)? */
  Model.prototype.bornBy = function (/** @type {number} */ i, /** @type {number} */ k) {
    return this.data.nodes.born[i] <= k;
  };

  /* How many of a "+n more" marker's nodes exist at (k, p), and whether the path goes into one. */
  Model.prototype.hiddenCount = function (/** @type {any} */ marker, /** @type {number} */ k, /** @type {number} */ p, /** @type {Object<number, boolean>} */ onPath) {
    var n = 0, pathInside = false, self = this;
    marker.nodes.forEach(function (/** @type {number} */ x) { if (self.exists(x, k, p)) n++; if (onPath[x]) pathInside = true; });
    return [n, pathInside];
  };

  /* -- one moment from the server ------------------------------------------------------------ */

  /* The folded tree at one moment, as mctsviz.explorer.served answers it: the drawn nodes with
     their statistics and "+n more" counts, and every node the answer names. */
  /** @constructor @param {any} data @param {Object<string, Object<string, number>>} f */
  function ServedModel(data, f) {
    this.data = data;
    this.f = f;
    this.count = data.count;
    this.root = 0;
    this.iterations = data.iterations;
    this.kids = {};
    this.n = {}; this.w = {}; this.q = {}; this.c = {}; this.b = {};
    this.more = {}; this.morePath = {};
    this.shape = "";
  }

  /* Take an answer; returns whether the drawn nodes or their folds changed (a new layout). */
  ServedModel.prototype.load = function (answer) {
    var t = answer.nodes, ids = t.id, nodes = { parent: {}, name: {}, action: {}, mover: {}, terminal: {}, prior: {} };
    var kids = {}, n = {}, w = {}, q = {}, c = {}, b = {}, more = {}, morePath = {}, shape = [answer.root], f = this.f.stats;
    if (t.chance) /** @type {any} */ (nodes).chance = {};
    for (var j = 0; j < ids.length; j++) {
      var i = ids[j];
      for (var column in nodes) nodes[column][i] = t[column][j];
    }
    for (j = 0; j < answer.drawn; j++) {
      i = ids[j];
      var s = t.stats[j];
      n[i] = s[f.n]; w[i] = s[f.w]; q[i] = s[f.mean]; c[i] = s[f.colour]; b[i] = s[f.box];
      more[i] = t.more[j][0]; morePath[i] = !!t.more[j][1];
      kids[i] = kids[i] || [];
      if (i !== answer.root) (kids[t.parent[j]] = kids[t.parent[j]] || []).push(i);
      shape.push(i + (more[i] ? "+" : ""));
    }
    this.data.nodes = nodes;
    if (answer.boards) {
      // The positions of the nodes listed, by node id (the one-file explorer's, by index).
      var pics = answer.boards, cells = {}, moved = {};
      for (j = 0; j < ids.length; j++) { cells[ids[j]] = pics.cells[j]; moved[ids[j]] = pics.moved[j]; }
      this.data.boards = { rows: pics.rows, cols: pics.cols, codes: pics.codes, glyphs: pics.glyphs, colours: pics.colours, checkered: pics.checkered, cells: cells, moved: moved };
    }
    this.count = answer.count;
    this.root = answer.root;
    this.kids = kids; this.n = n; this.w = w; this.q = q; this.c = c; this.b = b;
    this.more = more; this.morePath = morePath;
    var key = shape.join(",") + "|" + answer.links.map(String).join(";");
    var changed = key !== this.shape;
    this.shape = key;
    return changed;
  };

  /* The server answers with the nodes existing at the moment asked about only. */
  ServedModel.prototype.exists = function (i) { return this.n[i] !== undefined; };
  ServedModel.prototype.moveTo = function () {};
  ServedModel.prototype.bornBy = function (/** @type {number} */ i) { return this.n[i] !== undefined; };
  ServedModel.prototype.hiddenCount = function (marker) { return [this.more[marker.parent] || 0, !!this.morePath[marker.parent]]; };

  /* -- which nodes are drawn, and where ------------------------------------------------------ */

  /* The nodes drawn for iteration k: up to ``budget`` of the tree as it stands after k, best
     first by their visits then (the model's statistics when called; ties by id), each with its
     parent; then every node of ``forced`` (the iteration's path, new and simulated nodes, the
     selected one) with the way to it, whatever the budget. */
  /** @param {Model} model @param {number} budget @param {number} k @param {number[]} forced */
  function chooseNodes(model, budget, k, forced) {
    var chosen = new Uint8Array(model.count), heap = [0], visits = model.n, taken = 0;
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
      for (var i = 0; i < kids.length; i++) if (model.bornBy(kids[i], k)) push(kids[i]);
    }
    var parent = model.data.nodes.parent;
    forced.forEach(function (node) {
      for (var y = node; y >= 0 && y < model.count && !chosen[y]; y = parent[y]) chosen[y] = 1;
    });
    return chosen;
  }

  /* A tidy layout of the drawn nodes (in the manner of Reingold and Tilford): each subtree is
     built with its left and right contour per depth, and a subtree is pushed right only as far
     as its contour needs to clear its left siblings'. A parent sits over its first and last
     child. It depends on the iteration shown (the nodes drawn then) and the user's folds, never
     on the phase, so nothing moves within an iteration. ``dims`` is a node's box {w, h}. */
  /** @param {any} model @param {Uint8Array|null} shown @param {Object<number, boolean>} unfolded
      @param {Object<number, boolean>} collapsed @param {{w: number, h: number}} dims @param {number} k */
  function layout(model, shown, unfolded, collapsed, dims, k) {
    var STEP = dims.w + GAP_X, ROW = dims.h + GAP_Y, places = {}, markers = [], below = {}, offset = {};
    // Lays out one subtree: returns its left and right contour per depth, relative to its root,
    // and notes each child's offset from its parent (a marker's in the marker), so no subtree's
    // places are copied on the way up.
    function build(node) {
      var kids = model.kids[node] || [], drawn = [], hidden = [], i;
      if (!collapsed[node]) {
        for (i = 0; i < kids.length; i++) (!shown || shown[kids[i]] || (unfolded[node] && model.bornBy(kids[i], k)) ? drawn : hidden).push(kids[i]);
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
      places[node] = { x: x - minX, y: depth * ROW };
      below[node].forEach(function (owner) {
        if (typeof owner === "number") place(owner, x + offset[owner], depth + 1);
        else { owner.x = x + owner.offset - minX; owner.y = (depth + 1) * ROW; }
      });
    }
    place(model.root, 0, 0);
    return { places: places, markers: markers };
  }

  /* -- the explorer ------------------------------------------------------------------------- */

  /** @constructor @param {HTMLElement & {mvx?: any}} root @param {any} data @param {string|null} [api] */
  function Explorer(root, data, api) {
    this.root = root;
    this.data = data;
    this.f = fieldIndex(data.fields);
    this.api = api || null;  // a served explorer's API: each moment is fetched from there
    /** @type {any} the page's Model or a served explorer's ServedModel: the same questions */
    this.model = this.api ? new ServedModel(data, this.f) : new Model(data, this.f);
    this.budget = data.budget || 250;
    /** @type {Object<number, boolean>} nodes a memory carried over from earlier moves (a game's search) */
    this.carried = {};
    var carried = this.carried;
    (data.carried || []).forEach(function (/** @type {number} */ i) { carried[i] = true; });
    /** @type {Uint8Array|null} */
    this.shown = null;
    this.layoutK = -1;  // the iteration the drawn nodes and places are for
    /** @type {Object<number, boolean>} */
    this.unfolded = {};
    this.opened = [];  // served: the subtrees opened by clicking their "+n more", newest last
    /** @type {Object<number, boolean>} */
    this.collapsed = {};
    /** @type {number|null} */
    this.selected = null;
    this.k = 0;
    this.p = 3;
    this.timer = null;
    this.speed = 0;  // an index into SPEEDS
    this.following = true;
    this.boardsOn = false;
    this.dims = { w: NODE_W, h: NODE_H };
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
    if (start && start.node !== null && start.node >= 0 && start.node < this.model.count) this.selected = start.node;
    this.goTo(isNaN(k) ? 0 : k, p < 0 ? 3 : p);
    if (this.selected !== null) this.select(this.selected);
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
      // After Enter the keys step again: the field hands the focus back to the explorer.
      field.addEventListener("keydown", function (/** @type {KeyboardEvent} */ e) {
        if (e.key !== "Enter") return;
        var k = parseInt(field.value, 10);
        if (!isNaN(k) && k !== self.k) self.goTo(k, self.k ? self.p : 3);
        self.root.focus();
      });
    }
    this.speedMenu = html("select", "mvx-speed", bar);
    this.speedMenu.setAttribute("aria-label", "Play speed");
    this.speedMenu.title = "Play speed";
    SPEED_NAMES.forEach(function (name, i) {
      var o = html("option", "", self.speedMenu, name);
      o.value = String(i);
    });
    this.speedMenu.addEventListener("change", function () {
      self.speed = parseInt(self.speedMenu.value, 10) || 0;
      if (self.timer) { self.stop(); self.togglePlay(); }
    });
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
      var b = html("button", "mvx-button", zoom, String(z[0]));
      b.type = "button"; b.title = z[1]; b.setAttribute("aria-label", String(z[1]));
      b.addEventListener("click", function () { self.zoomBy(Number(z[2])); });
    });
    var fit = html("button", "mvx-button", zoom, "Fit");
    fit.type = "button"; fit.title = "Fit the tree in view";
    fit.addEventListener("click", function () { self.fit(); });
    // Follow: after every step the camera brings the iteration's own nodes into view.
    this.followButton = html("button", "mvx-button mvx-follow", zoom, "Follow");
    this.followButton.type = "button";
    this.followButton.title = "Keep the iteration's path, new and simulated nodes in view (F)";
    this.followButton.setAttribute("aria-pressed", "true");
    this.followButton.addEventListener("click", function () { self.setFollow(!self.following); });
    if (this.data.boards) {
      this.boardButton = html("button", "mvx-button mvx-boards", zoom, "Boards");
      this.boardButton.type = "button";
      this.boardButton.title = "Draw the position in each node (B)";
      this.boardButton.setAttribute("aria-pressed", "false");
      this.boardButton.addEventListener("click", function () { self.setBoards(!self.boardsOn); });
    }

    this.phaseText = html("p", "mvx-phase-text", root);
    this.key(root);
    var body = html("div", "mvx-body", root);
    var stage = html("div", "mvx-stage", body);
    stage.setAttribute("data-stage", "");
    this.stage = stage;
    this.svg = svg("svg", { class: "mvx-svg", role: "img", "aria-label": "The search tree" }, stage);
    this.view = svg("g", { class: "mvx-view" }, this.svg);
    this.edgeLayer = svg("g", { class: "mvx-edges" }, this.view);
    this.nodeLayer = svg("g", { class: "mvx-nodes" }, this.view);
    this.zoomState = { x: PAD, y: PAD, s: 1 };
    // When the path is taller than the stage at a readable zoom: how many levels lie above.
    this.above = html("button", "mvx-button mvx-above", stage);
    this.above.type = "button";
    this.above.hidden = true;
    this.above.addEventListener("click", function () { self.showRoot(); });
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
        var target = /** @type {Element} */ (e.target);
        var go = target.closest ? target.closest("[data-mvx-goto]") : null;
        if (!go || document.querySelector(".mvx") !== root) return;
        var phase = PHASES.indexOf(go.getAttribute("data-mvx-goto") || "");
        self.goTo(self.k || 1, phase < 0 ? 0 : phase);
        root.scrollIntoView({ block: "start" });
      });
    }
    // Rows of the page's own tables name their node: clicking one selects it here.
    var scope = this.standalone ? root : document;
    scope.addEventListener("click", function (e) {
      var target = /** @type {Element} */ (e.target);
      var t = target.closest ? target.closest("[data-mv-node]") : null;
      var row = t || (target.closest ? target.closest("tr") : null);
      if (row && !t) t = row.querySelector("[data-mv-node]");
      if (t && !root.contains(t)) self.select(parseInt(t.getAttribute("data-mv-node") || "", 10));
    });
  };

  Explorer.prototype.key = function (root) {
    var d = this.data, key = html("div", "mvx-key", root);
    html("span", "mvx-key__label", key, "mean " + d.scale[0]);
    var ramp = html("span", "mvx-key__ramp", key);
    d.palette.forEach(function (c) { var s = html("span", "", ramp); s.style.background = c; });
    html("span", "mvx-key__label", key, String(d.scale[1]));
    var items = [["path", "path"], ["new", "new node"], ["sim", "simulated"], ["updated", "updated"]];
    // Shapes only some trees have, named only where they appear.
    var chance = d.nodes ? d.nodes.chance : null;  // a served explorer fetches its nodes later
    if (chance && Object.keys(chance).some(function (i) { return chance[i]; })) items.push(["chance", "chance node (an outcome is drawn)"]);
    if (Object.keys(this.carried).length) items.push(["carried", "carried over from an earlier move"]);
    items.forEach(function (k) {
      var item = html("span", "mvx-key__item", key);
      html("span", "mvx-key__swatch mvx-key__swatch--" + k[0], item);
      html("span", "", item, k[1]);
    });
  };

  /* -- moments ------------------------------------------------------------------------------- */

  /* Show the moment (k, p); ``direction`` (1 or -1: a step) lets a served explorer fetch the
     moment after it ahead of time. */
  /** @param {number} k @param {number} p @param {number} [direction] */
  Explorer.prototype.goTo = function (k, p, direction) {
    var m = this.model;
    k = Math.max(0, Math.min(m.iterations, k | 0));
    p = k === 0 ? 3 : Math.max(0, Math.min(3, p | 0));
    this.k = k;
    this.p = p;
    this.direction = direction || 0;
    if (this.api) { this.fetchMoment(); return; }
    // The nodes drawn and their places are the tree's after iteration k: they change between
    // iterations, never between the phases of one.
    if (k !== this.layoutK) this.relayoutAt(k);
    m.moveTo(p === 3 ? k : k - 1);
    this.draw();
    this.follow();
    this.writeLink();
  };

  /* The nodes the iteration k must show, whatever the budget: its path, new and simulated
     nodes, and the selected node. */
  Explorer.prototype.forcedAt = function (/** @type {number} */ k) {
    var it = k ? this.data.iters[k - 1] : null, forced = it ? it.path.concat(it.new, [it.sim]) : [0];
    if (this.selected !== null && this.model.bornBy(this.selected, k)) forced.push(this.selected);
    return forced;
  };

  /* Choose and place the nodes drawn for iteration k (one file: the tree as it stands then),
     and leave the statistics at the moment shown. */
  Explorer.prototype.relayoutAt = function (/** @type {number} */ k) {
    var m = this.model;
    m.moveTo(k);  // the visits after k choose the nodes
    this.shown = chooseNodes(m, this.budget, k, this.forcedAt(k));
    this.layoutK = k;
    this.relayout();
    m.moveTo(this.p === 3 ? this.k : this.k - 1);
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
    if (this.model.load(answer) || !this.places) { this.layoutK = answer.iteration; this.relayout(); }
    this.draw();
    if (this.anchor) this.keepAnchor(); else this.follow();
    this.writeLink();
    this.markRows();
    if (!this.root.hasAttribute("data-mvx-ready")) this.root.setAttribute("data-mvx-ready", "1");
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

  /* Play: phase by phase, or whole iterations at SPEEDS[speed] a second (several a tick when
     faster than a tick), or straight to the end. */
  Explorer.prototype.togglePlay = function () {
    if (this.timer) { this.stop(); return; }
    var self = this, rate = SPEEDS[this.speed], last = this.model.iterations;
    if (this.k === last && this.p === 3) this.goTo(0, 3);
    if (rate === Infinity) { this.goTo(last, 3); return; }
    this.playButton.textContent = "Pause";
    this.playButton.title = "Pause (space)";
    this.playButton.setAttribute("aria-label", "Pause (space)");
    this.root.setAttribute("data-mvx-playing", "1");
    if (!rate) {
      this.timer = setInterval(function () { if (!self.step(1)) self.stop(); }, PHASE_MS);
      return;
    }
    var tick = Math.max(1000 / rate, 50), per = Math.max(1, Math.round(rate * tick / 1000));
    this.timer = setInterval(function () {
      if (self.api && self.inFlight) return;  // the server is still answering the last tick
      if (self.k >= last) { self.stop(); return; }
      self.goTo(Math.min(last, self.k + per), 3, 1);
    }, tick);
  };

  Explorer.prototype.stop = function () {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = "Play";
    this.playButton.title = "Play (space)";
    this.playButton.setAttribute("aria-label", "Play (space)");
    this.root.removeAttribute("data-mvx-playing");
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
      case "f": case "F": this.setFollow(!this.following); break;
      case "b": case "B": if (this.data.boards) this.setBoards(!this.boardsOn); else handled = false; break;
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
    /** @type {Object<string, string>} */
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
     the next (a step moves a few nodes, adds or drops a few): only what changed is made, moved
     or removed. Between iterations the moved ones glide (not when the user prefers less
     motion, nor when playing fast). */
  Explorer.prototype.relayout = function () {
    var m = this.model, self = this, dims = this.dims;
    var lay = layout(m, this.shown, this.unfolded, this.collapsed, dims, this.layoutK);
    var glide = !!this.places && !reducedMotion() && !(this.timer && this.speed >= 2);
    this.root.classList.toggle("mvx-glide", glide);
    this.places = lay.places;
    this.markers = lay.markers;
    var oldNodes = this.nodeEls || {}, oldEdges = this.edgeEls || {}, oldFolds = this.foldEls || {};
    this.nodeEls = {};
    this.edgeEls = {};
    this.foldEls = {};
    /** @param {string} key @param {string} className @param {{x: number, y: number}} a @param {{x: number, y: number}} b */
    function line(key, className, a, b) {
      var e = oldEdges[key];
      if (e) delete oldEdges[key];
      else e = svg("path", { class: className }, self.edgeLayer);
      place(e, a, b);
      self.edgeEls[key] = e;
      return e;
    }
    // Attributes are written only when they change: most places stay from one layout to the
    // next. The style's copy of the path is what glides (CSS d); the attribute, what stays.
    /** @param {any} e @param {{x: number, y: number}} a @param {{x: number, y: number}} b */
    function place(e, a, b) {
      var d = "M" + (a.x + dims.w / 2) + " " + (a.y + dims.h) + "L" + (b.x + dims.w / 2) + " " + b.y;
      if (e.mvxAt === d) return;
      e.mvxAt = d;
      e.setAttribute("d", d);
      e.style.d = 'path("' + d + '")';
    }
    /** @param {any} g @param {{x: number, y: number}} at */
    function move(g, at) {
      var transform = "translate(" + at.x + "," + at.y + ")";
      if (g.mvxAt === transform) return;
      g.setAttribute("transform", g.mvxAt = transform);
      g.style.transform = "translate(" + at.x + "px," + at.y + "px)";
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
    this.data.links.forEach(function (/** @type {number[]} */ link) {
      var a = lay.places[link[0]], b = lay.places[link[1]];
      if (a && b) line("link-" + link[0] + "-" + link[1], "mvx-edge mvx-link", a, b).setAttribute("data-born", link[2]);
    });
    this.markerEls = this.markers.map(function (/** @type {any} */ mk) {
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

  /* A node's label: the move; the root's and a one-player game's nodes: their names (the
     pages' names: "S0" in the lecture's toy tree, "root" elsewhere). */
  Explorer.prototype.nodeLabel = function (/** @type {number} */ i) {
    var d = this.data;
    return i === 0 || d.players === 1 ? d.nodes.name[i] : d.nodes.action[i];
  };

  Explorer.prototype.makeNode = function (/** @type {number} */ i) {
    var self = this, d = this.data, w = this.dims.w, h = this.dims.h;
    var chance = !!(d.nodes.chance && d.nodes.chance[i]);
    var g = svg("g", { class: chance ? "mvx-node mvx-chance" : "mvx-node", "data-node": i, "data-role": "", tabindex: "-1" }, this.nodeLayer);
    // A chance node in its own shape, in the same box (the layout is unchanged): an oval.
    svg("rect", { class: "mvx-box", width: w, height: h, rx: chance ? Math.min(w, h) / 2 : 6 }, g);
    var t1 = svg("text", { class: "mvx-label", x: w / 2, y: 15 }, g);
    t1.textContent = clip(this.nodeLabel(i), 12);
    var t2 = svg("text", { class: "mvx-stats", x: w / 2, y: 31 }, g);
    if (this.boardsOn) this.drawBoard(g, i, (w - this.boardSize.w) / 2, 38, this.boardSize.cell);
    if (this.carried[i]) {  // a dot in the corner: born in an earlier move's search
      g.setAttribute("data-carried", "1");
      svg("circle", { class: "mvx-carried", cx: 7, cy: 7, r: 3.5 }, g);
    }
    svg("title", {}, g).textContent = d.nodes.name[i] + (this.carried[i] ? " (carried over from an earlier move)" : "");
    g.addEventListener("click", function (/** @type {Event} */ e) { e.stopPropagation(); self.select(i); });
    g.addEventListener("dblclick", function (/** @type {Event} */ e) { e.stopPropagation(); self.toggleCollapse(i); });
    this.fitText(t1, w - 8);
    return { g: g, stats: t2, text: "", fill: "" };
  };

  /* Keep a label inside its box: squeezed to the box's width when wider (never clipped). */
  Explorer.prototype.fitText = function (/** @type {any} */ t, /** @type {number} */ room) {
    t.removeAttribute("textLength");
    t.removeAttribute("lengthAdjust");
    var width = 0;
    try { width = t.getComputedTextLength(); } catch (err) { return; }
    if (width > room) {
      t.setAttribute("textLength", String(room));
      t.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
  };

  /* The position at node i as a grid of cells (the data's boards: drawn by the figures' board
     code in Python, sent as cell codes), at (x, y) with cells of ``cell`` px; the cells the
     node's move changed are marked. */
  Explorer.prototype.drawBoard = function (/** @type {any} */ parent, /** @type {number} */ i, /** @type {number} */ x, /** @type {number} */ y, /** @type {number} */ cell) {
    var b = this.data.boards, codes = b.cells[i] || "", moved = {}, g = svg("g", { class: "mvx-board", transform: "translate(" + x + "," + y + ")", "aria-hidden": "true" }, parent);
    (b.moved[i] || []).forEach(function (/** @type {number} */ c) { moved[c] = true; });
    for (var r = 0; r < b.rows; r++) {
      for (var c = 0; c < b.cols; c++) {
        var at = r * b.cols + c, code = b.codes.indexOf(codes.charAt(at));
        var dark = b.checkered && (r + c) % 2 === 1;
        svg("rect", { class: "mvx-cell" + (dark ? " mvx-cell--dark" : "") + (moved[at] ? " mvx-cell--moved" : ""), x: c * cell, y: r * cell, width: cell, height: cell }, g);
        if (code > 0) {
          var t = svg("text", { class: "mvx-glyph", x: c * cell + cell / 2, y: r * cell + cell * 0.78, "font-size": Math.round(cell * 0.8) }, g);
          t.setAttribute("fill", b.colours[code]);
          t.textContent = b.glyphs[code];
        }
      }
    }
    return g;
  };

  /* Boards on or off: nodes grow to hold a board, and are made again. */
  Explorer.prototype.setBoards = function (/** @type {boolean} */ on) {
    var b = this.data.boards;
    if (!b) return;
    this.boardsOn = on;
    var cell = b.rows * b.cols <= 16 ? 14 : b.rows * b.cols <= 49 ? 10 : 9;
    this.boardSize = { w: b.cols * cell, h: b.rows * cell, cell: cell };
    this.dims = on ? { w: Math.max(NODE_W, this.boardSize.w + 10), h: NODE_H + this.boardSize.h + 6 } : { w: NODE_W, h: NODE_H };
    this.boardButton.setAttribute("aria-pressed", String(on));
    for (var key in this.nodeEls) this.nodeEls[key].g.remove();
    for (key in this.edgeEls) this.edgeEls[key].remove();
    this.nodeEls = {};
    this.edgeEls = {};
    this.places = null;
    if (this.api) { this.relayout(); this.draw(); this.follow(true); }
    else { this.relayoutAt(this.k); this.draw(); this.follow(true); }
  };

  /* A "+n more" node under ``parent``: a click opens the children it stands for. */
  Explorer.prototype.makeFold = function (/** @type {number} */ parent) {
    var self = this, w = this.dims.w;
    var line = svg("path", { class: "mvx-edge mvx-edge--fold" }, this.edgeLayer);
    var g = svg("g", { class: "mvx-fold", "data-parent": parent, tabindex: "-1" }, this.nodeLayer);
    svg("rect", { class: "mvx-box", width: w, height: NODE_H, rx: 17 }, g);
    var t = svg("text", { class: "mvx-label", x: w / 2, y: 23 }, g);
    g.addEventListener("click", function (/** @type {Event} */ e) { e.stopPropagation(); self.unfold(parent); });
    return { g: g, text: t, line: line, mk: null };
  };

  /* Open a "+n more": the parent stays where it is on screen. */
  Explorer.prototype.unfold = function (/** @type {number} */ parent) {
    this.holdAnchor(parent);
    if (this.api) {
      this.opened = this.opened.filter(function (/** @type {number} */ x) { return x !== parent; }).concat([parent]).slice(-32);
      this.fetchMoment();
      return;
    }
    this.unfolded[parent] = true;
    this.relayout();
    this.draw();
    this.keepAnchor();
  };

  Explorer.prototype.toggleCollapse = function (/** @type {number} */ node) {
    if (!(this.model.kids[node] || []).length) return;
    this.holdAnchor(node);
    if (this.collapsed[node]) delete this.collapsed[node];
    else this.collapsed[node] = true;
    this.relayout();
    this.draw();
    this.keepAnchor();
  };

  Explorer.prototype.draw = function () {
    var m = this.model, d = this.data, k = this.k, p = this.p, f = this.f.up;
    var it = k ? d.iters[k - 1] : null;
    /** @type {Object<number, boolean>} */
    var onPath = {}, isNew = {}, updated = {}, pathEdges = {};
    if (it) {
      it.path.forEach(function (/** @type {number} */ n, /** @type {number} */ j) { onPath[n] = true; if (j) pathEdges[n] = it.path[j - 1]; });
      if (p >= 1) it.new.forEach(function (/** @type {number} */ n) { isNew[n] = true; });
      if (p === 3) it.up.forEach(function (/** @type {number[]} */ u) { updated[u[f.node]] = true; });
    }
    var palette = d.palette, S = d.strings, changed = [];
    for (var key in this.nodeEls) {
      var i = +key, el = this.nodeEls[key], g = el.g;
      var here = m.exists(i, k, p), edge = this.edgeEls[i];
      g.classList.toggle("mvx-hidden", !here);
      if (edge) {
        edge.classList.toggle("mvx-hidden", !here);
        edge.classList.toggle("mvx-on-path", here && pathEdges[i] !== undefined);
      }
      if (!here) {
        g.classList.remove("mvx-on-path", "mvx-new", "mvx-sim", "mvx-updated", "mvx-selected");
        if (el.role !== "") g.setAttribute("data-role", el.role = "");
        continue;
      }
      // Written only when changed: a step changes a path's worth of nodes, not the whole tree.
      var fill = m.c[i] < 0 ? "#ffffff" : palette[m.c[i]], stats = S[m.b[i]];
      if (el.fill !== fill) {
        el.fill = fill;
        g.firstChild.style.fill = fill;
        g.classList.toggle("mvx-dark", luminance(fill) < 0.35);
      }
      if (el.text !== stats) { el.stats.textContent = el.text = stats; changed.push(el.stats); }
      var sim = !!(it && p >= 2 && it.sim === i), selected = this.selected === i;
      g.classList.toggle("mvx-on-path", !!onPath[i]);
      g.classList.toggle("mvx-new", !!isNew[i]);
      g.classList.toggle("mvx-sim", sim);
      g.classList.toggle("mvx-updated", !!updated[i]);
      g.classList.toggle("mvx-selected", selected);
      var role = [onPath[i] ? "path" : "", isNew[i] ? "new" : "", sim ? "simulated" : "", updated[i] ? "updated" : "", selected ? "selected" : ""].filter(Boolean).join(" ");
      if (el.role !== role) g.setAttribute("data-role", el.role = role);
    }
    // Measured after every write, so the browser lays the text out once.
    var room = this.dims.w - 8, self = this;
    changed.forEach(function (t) { self.fitText(t, room); });
    for (var e in this.edgeEls) {
      if (e.indexOf("link-") !== 0) continue;
      var link = this.edgeEls[e], born = +link.getAttribute("data-born");
      link.classList.toggle("mvx-hidden", !(born < k || (born === k && p >= 1) || born === 0));
    }
    this.markerEls.forEach(function (/** @type {any} */ mk) {
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
        self.fitText(mk.text, room);
      }
    });
    this.scrubber.value = String(k);
    this.label.textContent = k === 0 ? "Before iteration 1" : "Iteration " + k + " of " + m.iterations + " · " + PHASE_TITLES[p];
    this.phaseButtons.forEach(function (/** @type {HTMLElement} */ b, /** @type {number} */ i) {
      b.classList.toggle("mvx-phase--current", k > 0 && i === p);
      b.setAttribute("aria-pressed", String(k > 0 && i === p));
    });
    this.phaseText.textContent = it ? S[it.text[p]] : "The tree before the first iteration. " + d.legend + ".";
    this.root.setAttribute("data-mvx-moment", k + ":" + PHASES[p]);
    this.root.setAttribute("data-iteration", String(k));
    this.root.setAttribute("data-phase", PHASES[p]);
    this.fillPanel();
  };

  /** @param {string} hex */
  function luminance(hex) {
    if (hex.charAt(0) !== "#" || hex.length !== 7) return 1;
    var c = [1, 3, 5].map(function (j) { return parseInt(hex.substr(j, 2), 16) / 255; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }

  /* -- the panel: the selected node, and this phase's table ---------------------------------- */

  Explorer.prototype.select = function (/** @type {number} */ node) {
    if (this.api) {
      if (!(node >= 0 && node < this.data.count)) return;
      this.selected = node;
      if (this.places && this.places[node] && !this.inFlight) { this.draw(); this.writeLink(); this.markRows(); }
      else this.fetchMoment();  // the server draws the way to it (pin)
      return;
    }
    if (!(node >= 0 && node < this.model.count)) return;
    this.selected = node;
    // A node behind a fold or a collapsed ancestor is brought into view: the selected node is
    // drawn whatever the budget (forcedAt), with the way to it.
    var x = node, nodes = this.data.nodes, changed = !this.places[node];
    while (x > 0) {
      x = nodes.parent[x];
      if (this.collapsed[x]) { delete this.collapsed[x]; changed = true; }
    }
    if (changed) this.relayoutAt(this.k);
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
  Explorer.prototype.formula = function (/** @type {any[]} */ step, /** @type {number[]} */ r) {
    var d = this.data, S = d.strings, f = this.f.score, g = this.f.step;
    /** @type {Object<string, string>} */
    var slots = { name: d.nodes.name[r[f.node]], n: S[r[f.n]], w: S[r[f.w]], exploit: S[r[f.exploit]], explore: S[r[f.explore]], score: S[r[f.score]], p: S[r[f.p]], N: S[step[g.visits]], log: S[step[g.log]] };
    return d.templates[r[f.template]].replace(/\{(\w+)\}/g, function (all, slot) {
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
      if (d.nodes.chance && d.nodes.chance[node]) facts.push(["chance node", "chance", "yes: an outcome is drawn by its probability (prior P)"]);
      // An imported tree: the engine's own numbers (KataGo's scoreLead, lcb, ...; Gumbel's considered).
      if (d.nodes.facts && d.nodes.facts[node]) d.nodes.facts[node].forEach(function (/** @type {string[]} */ pair) { facts.push([pair[0], "engine", pair[1]]); });
      facts.forEach(function (f) {
        html("dt", "", dl, f[0]);
        html("dd", "mvx-fact-" + f[1], dl, f[2]);
      });
      if (d.boards && d.boards.cells[node]) {
        var pic = svg("svg", { class: "mvx-position", role: "img", "aria-label": "The position at " + d.nodes.name[node] + " (its move marked)" }, box);
        var cell = Math.min(28, Math.floor(224 / Math.max(d.boards.rows, d.boards.cols)));
        pic.setAttribute("width", String(d.boards.cols * cell));
        pic.setAttribute("height", String(d.boards.rows * cell));
        this.drawBoard(pic, node, 0, 0, cell);
      }
      var written = 0, fs = this.f.score, fg = this.f.step;
      choices.forEach(function (/** @type {any[]} */ step) {
        step[fg.rows].forEach(function (/** @type {number[]} */ r) {
          if (r[fs.node] !== node) return;
          var chosen = r[fs.chosen];
          html("p", "mvx-formula" + (chosen ? " mvx-formula--chosen" : ""), box, self.formula(step, r) + (chosen ? " (chosen)" : ""));
          written++;
        });
      });
      if (!written && node !== 0 && d.nodes.chance && d.nodes.chance[d.nodes.parent[node]]) {
        html("p", "mvx-note", box, "An outcome of chance node " + d.nodes.name[d.nodes.parent[node]] + ": drawn by its probability, " + d.nodes.prior[node] + ", never scored.");
      } else if (!written && it && node !== 0) {
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
    var g = this.f.step, fu = this.f.up;
    if (this.p <= 1) {
      it.steps.forEach(function (/** @type {any[]} */ step, /** @type {number} */ j) {
        var at = step[g.node], drawn = step[g.chosen];
        if (d.nodes.chance && d.nodes.chance[at]) {
          html("p", "mvx-note", panel, "Step " + (j + 1) + ": " + d.nodes.name[at] + " is a chance node: " + d.nodes.name[drawn] + " was drawn by its probability, " + d.nodes.prior[drawn] + ".");
          return;
        }
        self.scoreTable(panel, "Step " + (j + 1) + ": the children of " + d.nodes.name[step[g.node]] + " (N = " + S[step[g.visits]] + ")", step[g.rows]);
      });
      if (this.p === 1 && it.exp) self.scoreTable(panel, "The child to simulate, among the new children of " + d.nodes.name[it.exp[g.node]], it.exp[g.rows]);
    } else if (this.p === 3) {
      var table = this.table(panel, "Backpropagation: the statistics after it", ["node", "N", "W", "mean"]);
      it.up.forEach(function (/** @type {number[]} */ u) { self.row(table, u[fu.node], [d.nodes.name[u[fu.node]], String(u[fu.n]), S[u[fu.w]], S[u[fu.mean]]], false); });
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

  Explorer.prototype.scoreTable = function (/** @type {Element} */ panel, /** @type {string} */ caption, /** @type {number[][]} */ rows) {
    var d = this.data, S = d.strings, self = this, f = this.f.score;
    var body = this.table(panel, caption, d.policy === "PUCT" ? ["child", "P", "n", "W", "Q", "U", "PUCT"] : ["child", "n", "W", "W/n", "explore", d.policy]);
    rows.forEach(function (r) {
      var name = d.nodes.name[r[f.node]], n = S[r[f.n]], w = S[r[f.w]], exploit = S[r[f.exploit]], explore = S[r[f.explore]], score = S[r[f.score]];
      var cells = d.policy === "PUCT" ? [name, S[r[f.prior]], n, w, exploit, explore, score] : [name, n, w, exploit, explore, score];
      if (r[f.chosen]) cells[cells.length - 1] += " ✔";
      self.row(body, r[f.node], cells, !!r[f.chosen]);
    });
  };

  /* -- pan and zoom ------------------------------------------------------------------------- */

  /* Move the camera; ``glide``: smoothly (a follow step), else at once (the user's hand). */
  /** @param {boolean} [glide] */
  Explorer.prototype.applyZoom = function (glide) {
    var z = this.zoomState;
    this.view.classList.toggle("mvx-camera-glide", !!glide && !reducedMotion());
    this.view.setAttribute("transform", "translate(" + z.x.toFixed(1) + "," + z.y.toFixed(1) + ") scale(" + z.s.toFixed(4) + ")");
    this.view.style.transform = "translate(" + z.x.toFixed(1) + "px," + z.y.toFixed(1) + "px) scale(" + z.s.toFixed(4) + ")";
  };

  /** @param {number} factor @param {number} [cx] @param {number} [cy] */
  Explorer.prototype.zoomBy = function (factor, cx, cy) {
    var z = this.zoomState, rect = this.svg.getBoundingClientRect();
    if (cx === undefined || cy === undefined) { cx = rect.width / 2; cy = rect.height / 2; }
    var s = Math.max(0.05, Math.min(4, z.s * factor));
    z.x = cx - (cx - z.x) * s / z.s;
    z.y = cy - (cy - z.y) * s / z.s;
    z.s = s;
    this.applyZoom();
  };

  /* The box around ``nodes``' places (those drawn), or null. */
  Explorer.prototype.box = function (/** @type {number[]} */ nodes) {
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity, places = this.places || {}, w = this.dims.w, h = this.dims.h;
    nodes.forEach(function (i) {
      var at = places[i];
      if (!at) return;
      x0 = Math.min(x0, at.x); y0 = Math.min(y0, at.y);
      x1 = Math.max(x1, at.x + w); y1 = Math.max(y1, at.y + h);
    });
    return isFinite(x0) ? { x0: x0, y0: y0, x1: x1, y1: y1 } : null;
  };

  /* The largest zoom at which ``box`` fits the stage (with a margin). */
  Explorer.prototype.scaleFor = function (/** @type {{x0: number, y0: number, x1: number, y1: number}} */ box) {
    var rect = this.svg.getBoundingClientRect();
    return Math.min((rect.width - 2 * PAD) / (box.x1 - box.x0 || 1), (rect.height - 2 * PAD) / (box.y1 - box.y0 || 1));
  };

  /* Fit the nodes that exist now into view, never above natural size (the user's button: it
     may make labels small; stepping brings the camera back to a readable zoom). */
  Explorer.prototype.fit = function () {
    var m = this.model, k = this.k, p = this.p, drawn = Object.keys(this.places || {}).map(Number).filter(function (i) { return m.exists(i, k, p); });
    var box = this.box(drawn);
    if (!box) return;
    this.aim(box, Math.max(0.05, Math.min(1.4, this.scaleFor(box))), false);
  };

  /* Centre the camera on ``box`` at zoom ``s``. */
  Explorer.prototype.aim = function (/** @type {{x0: number, y0: number, x1: number, y1: number}} */ box, /** @type {number} */ s, /** @type {boolean} */ glide) {
    var rect = this.svg.getBoundingClientRect(), width = rect.width || 600, height = rect.height || 400;
    var y = (box.y1 - box.y0) * s <= height - 2 * PAD ? (height - (box.y1 - box.y0) * s) / 2 - box.y0 * s : PAD - box.y0 * s;
    this.zoomState = { s: s, x: (width - (box.x1 - box.x0) * s) / 2 - box.x0 * s, y: y };
    this.applyZoom(glide);
  };

  /* Is ``box`` inside the stage as the camera stands, at a readable zoom? */
  Explorer.prototype.inView = function (/** @type {{x0: number, y0: number, x1: number, y1: number}} */ box) {
    var z = this.zoomState, rect = this.svg.getBoundingClientRect(), margin = 4;
    if (z.s < MIN_SCALE - 1e-9 || z.s > MAX_SCALE + 1e-9) return false;
    return box.x0 * z.s + z.x >= margin && box.y0 * z.s + z.y >= margin && box.x1 * z.s + z.x <= rect.width - margin && box.y1 * z.s + z.y <= rect.height - margin;
  };

  /* The camera follows the search: after every step the iteration's path end, new and
     simulated nodes are inside the stage at a zoom where labels are at least 10 px. The whole
     tree is shown when it fits so; else as much of the path as fits above them, and a button
     says how many levels lie above. A camera that already shows them stays put. */
  /** @param {boolean} [force] */
  Explorer.prototype.follow = function (force) {
    if ((!this.following && !force) || !this.places) return;
    var rect = this.svg.getBoundingClientRect();
    if (!rect.width || !rect.height) return;  // not displayed (a closed tab of a page)
    var m = this.model, k = this.k, it = k ? this.data.iters[k - 1] : null, places = this.places;
    var path = it ? it.path.filter(function (/** @type {number} */ i) { return places[i]; }) : [m.root];
    var focus = path.slice(-1).concat(it ? it.new.concat([it.sim]) : []);
    var glide = !this.timer || this.speed < 2;
    var tree = this.box(Object.keys(places).map(Number).filter(function (i) { return m.bornBy(i, k); }).concat(path));
    var whole = tree ? Math.min(MAX_SCALE, this.scaleFor(tree)) : 0;
    if (tree && whole >= MIN_SCALE) {
      this.showAbove(0);
      if (!this.inView(tree) || Math.abs(this.zoomState.s - whole) > 0.02) this.aim(tree, whole, glide);
      return;
    }
    // Path nodes from the top are dropped until the rest fits at a readable zoom.
    var top = 0, box = this.box(focus.concat(path));
    while (box && top < path.length - 1 && this.scaleFor(box) < MIN_SCALE) {
      top++;
      box = this.box(focus.concat(path.slice(top)));
    }
    if (!box) return;
    if (!this.inView(box)) this.aim(box, Math.max(MIN_SCALE, Math.min(1, this.scaleFor(box))), glide);
    var root = this.box([m.root]);
    this.showAbove(top && root && !this.inView(root) ? top : 0);
  };

  Explorer.prototype.showAbove = function (/** @type {number} */ levels) {
    this.above.hidden = !levels;
    if (levels) this.above.textContent = "↑ " + levels + " level" + (levels === 1 ? "" : "s") + " above: show the root";
  };

  /* The root's end of the tree in view (the "levels above" button), at the same zoom. */
  Explorer.prototype.showRoot = function () {
    var at = this.places && this.places[this.model.root];
    if (!at) return;
    var rect = this.svg.getBoundingClientRect(), z = this.zoomState;
    z.x = (rect.width || 600) / 2 - (at.x + this.dims.w / 2) * z.s;
    z.y = PAD - at.y * z.s;
    this.applyZoom(true);
    this.showAbove(0);
  };

  Explorer.prototype.setFollow = function (/** @type {boolean} */ on) {
    this.following = on;
    this.followButton.setAttribute("aria-pressed", String(on));
    if (on) this.follow();
  };

  /* Note where ``node`` is on screen, so that a change of layout (a fold opened) keeps it there. */
  Explorer.prototype.holdAnchor = function (/** @type {number} */ node) {
    var at = this.places && this.places[node], z = this.zoomState;
    this.anchor = at ? { node: node, x: at.x * z.s + z.x, y: at.y * z.s + z.y } : null;
  };

  Explorer.prototype.keepAnchor = function () {
    var a = this.anchor, at = a && this.places && this.places[a.node], z = this.zoomState;
    this.anchor = null;
    if (!a || !at) return;
    z.x = a.x - at.x * z.s;
    z.y = a.y - at.y * z.s;
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
      self.zoomState.x = dragging.zx + dx;  // the user's own view: it holds until the next step
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
    var name = root.getAttribute("data-mvx-trace"), store = /** @type {any} */ (window).mctsvizExplorerData || {};
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
      new Explorer(/** @type {HTMLElement} */ (roots[i]), data);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  /** @type {any} */ (window).mctsvizExplorer = { start: start };
})();

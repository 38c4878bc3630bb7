/* mctsviz game view: a game's moves, boards and values; each move's search one click away.
 *
 * Written for mctsviz (MIT); no dependencies. Every text comes from the data Python wrote
 * (mctsviz.explorer.game): this script lays out and draws, and puts text on the page through
 * textContent only. A move's search opens in a frame at its last iteration: in one file, the
 * move's own explorer document (data-mvg-explorers: the id of a JSON object of documents by
 * move); served, the server's explorer of that move (data-mvg-api + N + "/").
 *
 * For tests: the root (.mvg) carries data-mvg-ready and data-mvg-move (the move shown); each
 * move's button and graph marker data-move; markers data-mark ("drop", "largest", "mismatch").
 */
// @ts-check
(function () {
  "use strict";

  var SVGNS = "http://www.w3.org/2000/svg";
  var W = 640, H = 220, PAD_L = 44, PAD_R = 12, PAD_T = 14, PAD_B = 28;
  var SEAT_CLASSES = ["mvg-a", "mvg-b"];

  /** @param {string} tag @param {string} className @param {Element|null} parent @param {string} [text] @returns {any} */
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

  /** @param {string} id @returns {any} */
  function jsonOf(id) {
    var holder = id ? document.getElementById(id) : null;
    return holder ? JSON.parse(holder.textContent || "null") : null;
  }

  /** @constructor @param {HTMLElement} root @param {any} data */
  function GameView(root, data) {
    this.root = root;
    this.data = data;
    this.explorers = jsonOf(root.getAttribute("data-mvg-explorers") || "");
    this.api = root.getAttribute("data-mvg-api") || "";
    /** @type {HTMLElement[]} */
    this.buttons = [];
    this.shown = 0;
    this.build();
    var searched = data.moves.filter(function (/** @type {any} */ m) { return m.searched; });
    var start = this.readLink();
    this.show(start || (searched.length ? searched[searched.length - 1].n : data.moves.length), false);
    root.setAttribute("data-mvg-ready", "1");
  }

  GameView.prototype.build = function () {
    var self = this, d = this.data, root = this.root;
    var top = html("div", "mvg-top", root);
    this.boardBox = html("div", "mvg-board", top);
    this.boardCaption = html("p", "mvg-caption", this.boardBox);
    this.board = html("div", "mvg-cells", this.boardBox);
    var right = html("div", "mvg-right", top);
    var legend = html("p", "mvg-legend", right);
    d.players.forEach(function (/** @type {string} */ name, /** @type {number} */ i) {
      html("span", "mvg-key " + (SEAT_CLASSES[i] || ""), legend, name);
    });
    html("span", "mvg-key mvg-key-share", legend, "bars: the move's share of visits");
    html("span", "mvg-key mvg-key-drop", legend, "▼ the largest drop of a side's value");
    html("span", "mvg-key mvg-key-mismatch", legend, "◆ the move by mean differs");
    this.graph(right);
    var list = html("ol", "mvg-moves", right);
    d.moves.forEach(function (/** @type {any} */ m) {
      var item = html("li", "", list);
      var b = html("button", "mvg-move " + (m.seat < 0 ? "mvg-chance" : SEAT_CLASSES[m.seat] || ""), item, m.text);
      b.type = "button";
      b.setAttribute("data-move", String(m.n));
      b.addEventListener("click", function () { self.show(m.n, true); });
      self.buttons.push(b);
    });
    this.heading = html("h2", "mvg-heading", root);
    this.frame = html("iframe", "mvg-frame", root);
    this.frame.setAttribute("title", "The search of the move shown");
    root.addEventListener("keydown", function (/** @type {KeyboardEvent} */ e) {
      if (e.target instanceof HTMLIFrameElement) return;
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        var next = Math.min(d.moves.length, Math.max(1, self.shown + (e.key === "ArrowDown" ? 1 : -1)));
        self.show(next, true);
        self.buttons[next - 1].focus();
      }
    });
  };

  /* The graph: each side's value at every searched move, the chosen move's share of visits as
     bars, markers at the largest drops and where the rules disagree; a click opens the move. */
  GameView.prototype.graph = function (/** @type {HTMLElement} */ parent) {
    var self = this, d = this.data, n = d.moves.length, low = d.range[0], high = d.range[1];
    var chart = svg("svg", { class: "mvg-graph", viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Each side's value and the chosen move's share of visits over the game" }, parent);
    /** @param {number} i */
    function x(i) { return PAD_L + (n > 1 ? (i - 1) * (W - PAD_L - PAD_R) / (n - 1) : (W - PAD_L - PAD_R) / 2); }
    /** @param {number} v */
    function y(v) { return PAD_T + (high - v) * (H - PAD_T - PAD_B) / (high - low || 1); }
    [low, (low + high) / 2, high].forEach(function (v) {
      svg("line", { class: "mvg-grid", x1: PAD_L, x2: W - PAD_R, y1: y(v), y2: y(v) }, chart);
      svg("text", { class: "mvg-axis", x: PAD_L - 4, y: y(v) + 4, "text-anchor": "end" }, chart).textContent = String(v);
    });
    var barW = Math.max(2, Math.min(12, (W - PAD_L - PAD_R) / Math.max(n, 1) - 2));
    d.moves.forEach(function (/** @type {any} */ m) {
      if (m.share === null || m.share === undefined) return;
      var top = y(low + m.share * (high - low));
      svg("rect", { class: "mvg-share", x: x(m.n) - barW / 2, y: top, width: barW, height: y(low) - top }, chart);
    });
    d.players.forEach(function (/** @type {string} */ _name, /** @type {number} */ seat) {
      var points = [];
      for (var i = 0; i < n; i++) {
        var v = d.values[i][seat];
        if (v !== null && v !== undefined) points.push(x(i + 1) + "," + y(v));
      }
      if (points.length) svg("polyline", { class: "mvg-line " + (SEAT_CLASSES[seat] || ""), points: points.join(" ") }, chart);
    });
    d.moves.forEach(function (/** @type {any} */ m) {
      var marks = [];
      if (m.drops) marks.push("drop");
      if (m.n === d.largest) marks.push("largest");
      if (m.mismatch) marks.push("mismatch");
      var hit = svg("g", { class: "mvg-hit", "data-move": m.n, "data-mark": marks.join(" "), tabindex: "-1" }, chart);
      svg("rect", { class: "mvg-hit-area", x: x(m.n) - 6, y: PAD_T, width: 12, height: H - PAD_T - PAD_B }, hit);
      if (m.drops) {
        m.drops.forEach(function (/** @type {number} */ seat) {
          var v = d.values[m.n - 1][seat], cy = y(v === null ? low : v);
          svg("path", { class: "mvg-drop " + (SEAT_CLASSES[seat] || ""), d: "M" + (x(m.n) - 6) + "," + (cy - 12) + "h12l-6,9z" }, hit);
        });
      }
      if (m.mismatch) svg("path", { class: "mvg-mismatch", d: "M" + x(m.n) + "," + (y(low) - 9) + "l5,5l-5,5l-5,-5z" }, hit);
      svg("title", {}, hit).textContent = m.text;
      hit.addEventListener("click", function () { self.show(m.n, true); });
    });
    this.cursor = svg("line", { class: "mvg-cursor", x1: 0, x2: 0, y1: PAD_T, y2: H - PAD_B }, chart);
    this.x = x;
  };

  GameView.prototype.drawBoard = function (/** @type {number} */ position) {
    var b = this.data.boards, box = this.board;
    box.textContent = "";
    if (!b) { this.boardBox.classList.add("mvg-hidden"); return; }
    box.style.gridTemplateColumns = "repeat(" + b.cols + ", 1.6em)";
    var cells = b.cells[Math.min(position, b.cells.length - 1)], before = position > 0 ? b.cells[position - 1] : null;
    cells.forEach(function (/** @type {any[]} */ cell, /** @type {number} */ i) {
      var c = html("span", "mvg-cell" + (cell[1] === 0 ? " mvg-p0" : cell[1] === 1 ? " mvg-p1" : ""), box, cell[0]);
      if (before && before[i][0] !== cell[0]) c.classList.add("mvg-moved");
    });
  };

  /* Show move N: the board after it, its line in the list, its search in the frame at its
     last iteration (a move without a search: the board and line only). */
  GameView.prototype.show = function (/** @type {number} */ number, /** @type {boolean} */ link) {
    var m = this.data.moves[number - 1];
    if (!m) return;
    this.shown = number;
    this.root.setAttribute("data-mvg-move", String(number));
    this.buttons.forEach(function (b, i) { b.setAttribute("aria-current", i === number - 1 ? "true" : "false"); });
    this.cursor.setAttribute("x1", this.x(number));
    this.cursor.setAttribute("x2", this.x(number));
    this.boardCaption.textContent = "After " + m.text.split(":")[0];
    this.drawBoard(number);
    this.heading.textContent = m.text;
    if (!m.searched) {
      this.frame.removeAttribute("src");
      this.frame.srcdoc = "";
      this.frame.classList.add("mvg-hidden");
    } else {
      this.frame.classList.remove("mvg-hidden");
      if (this.explorers) this.frame.srcdoc = this.explorers[String(number)] || "";
      else this.frame.src = this.api + number + "/#i=" + m.iterations + "&p=backprop";
    }
    if (link && history.replaceState) {
      try { history.replaceState(null, "", "#move=" + number); } catch (e) { /* a page that cannot rewrite its address */ }
    }
  };

  GameView.prototype.readLink = function () {
    var match = /^#move=([0-9]{1,6})$/.exec(location.hash);
    var n = match ? parseInt(match[1], 10) : 0;
    return n >= 1 && n <= this.data.moves.length ? n : 0;
  };

  function start() {
    var roots = document.querySelectorAll(".mvg:not([data-mvg-ready])");
    for (var i = 0; i < roots.length; i++) {
      var data = jsonOf(roots[i].getAttribute("data-mvg-source") || "");
      if (!data) { roots[i].textContent = "The game's data did not load."; continue; }
      /** @type {any} */ (roots[i]).mvg = new GameView(/** @type {HTMLElement} */ (roots[i]), data);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

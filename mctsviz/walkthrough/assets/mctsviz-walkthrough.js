/* mctsviz walkthrough pages: the iteration slider and arrow-key navigation.
 *
 * A slider page holds one <figure class="mv-frame"> per iteration, all but one hidden; the
 * range input, the buttons and the arrow keys choose which one shows. On an iteration page
 * the arrow keys follow the previous/next links. Local file, no network, no innerHTML: every
 * text shown was escaped when the page was written.
 */
(function () {
  "use strict";

  function typingIn(target) {
    if (!target || !target.tagName) return false;
    return target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
  }

  function plainKey(event) {
    return !(event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey);
  }

  function setupSlider(root) {
    var frames = Array.prototype.slice.call(root.querySelectorAll(".mv-frame"));
    var range = root.querySelector(".mv-slider__range");
    var label = root.querySelector(".mv-slider__label");
    var previous = root.querySelector(".mv-slider__prev");
    var next = root.querySelector(".mv-slider__next");
    if (!frames.length || !range) return;
    var current = -1;

    function show(index, updateHash) {
      index = Math.max(0, Math.min(frames.length - 1, index));
      if (index === current) return;
      current = index;
      frames.forEach(function (frame, j) { frame.hidden = j !== index; });
      range.value = String(index);
      var iteration = frames[index].getAttribute("data-iteration");
      if (label) label.textContent = "Iteration " + iteration + " (" + (index + 1) + " of " + frames.length + ")";
      root.setAttribute("data-current-iteration", iteration);
      if (previous) previous.disabled = index === 0;
      if (next) next.disabled = index === frames.length - 1;
      if (updateHash && window.history && window.history.replaceState) {
        try { window.history.replaceState(null, "", "#iteration-" + iteration); } catch (e) { /* some file:// setups refuse */ }
      }
    }

    function indexOfHash() {
      var match = /^#iteration-(\d+)$/.exec(window.location.hash || "");
      if (!match) return 0;
      for (var j = 0; j < frames.length; j++) {
        if (frames[j].getAttribute("data-iteration") === match[1]) return j;
      }
      return 0;
    }

    range.addEventListener("input", function () { show(Number(range.value), true); });
    if (previous) previous.addEventListener("click", function () { show(current - 1, true); });
    if (next) next.addEventListener("click", function () { show(current + 1, true); });
    document.addEventListener("keydown", function (event) {
      if (!plainKey(event) || event.target === range || typingIn(event.target)) return;
      var to = null;
      if (event.key === "ArrowLeft") to = current - 1;
      else if (event.key === "ArrowRight") to = current + 1;
      else if (event.key === "Home") to = 0;
      else if (event.key === "End") to = frames.length - 1;
      if (to === null) return;
      event.preventDefault();
      show(to, true);
    });
    window.addEventListener("hashchange", function () { show(indexOfHash(), false); });
    show(indexOfHash(), false);
    root.classList.add("mv-slider--ready");
  }

  function setupPager() {
    var previous = document.querySelector("a.mv-prev");
    var next = document.querySelector("a.mv-next");
    if (!previous && !next) return;
    document.addEventListener("keydown", function (event) {
      if (!plainKey(event) || typingIn(event.target)) return;
      var link = event.key === "ArrowLeft" ? previous : event.key === "ArrowRight" ? next : null;
      if (!link) return;
      event.preventDefault();
      window.location.href = link.href;
    });
  }

  function start() {
    var sliders = document.querySelectorAll("[data-mv-slider]");
    Array.prototype.forEach.call(sliders, setupSlider);
    if (!sliders.length) setupPager();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// The replay scrubber's view: an anywidget ES module (mctsviz.render.notebook.ReplayScrubber).
//
// Python draws each frame; this module shows it and sends the position back: the slider and
// the phase buttons set the `iteration` and `phase` traits, previous and next ask Python for a
// step. No HTML is built from strings: every text goes into a text node, and the tree (an SVG
// Graphviz drew from escaped labels) is shown through an <img>, where nothing in it can run.

function button(text, title) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (title) b.title = title;
  return b;
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "mctsviz-scrubber";

  const bar = document.createElement("div");
  bar.className = "mctsviz-scrubber-bar";
  const prev = button("◀ prev", "the previous phase");
  const next = button("next ▶", "the next phase");
  const slider = document.createElement("input");
  slider.type = "range";
  slider.min = "0";
  slider.step = "1";
  slider.setAttribute("aria-label", "iteration");
  bar.append(prev, slider, next);

  const phases = document.createElement("div");
  phases.className = "mctsviz-scrubber-phases";
  const phaseButtons = new Map();
  for (const phase of model.get("phases")) {
    const b = button(phase, `show the ${phase} phase`);
    b.addEventListener("click", () => {
      model.set("phase", phase);
      model.save_changes();
    });
    phaseButtons.set(phase, b);
    phases.append(b);
  }

  const position = document.createElement("div");
  position.className = "mctsviz-scrubber-position";
  position.setAttribute("aria-live", "polite");
  const error = document.createElement("div");
  error.className = "mctsviz-scrubber-error";
  const tree = document.createElement("img");
  tree.alt = "the search tree at this position";
  root.append(bar, phases, position, error, tree);
  el.append(root);

  // While the slider moves only its number changes; the tree is drawn where it stops.
  slider.addEventListener("input", () => {
    position.textContent = `iteration ${slider.value} …`;
  });
  slider.addEventListener("change", () => {
    model.set("iteration", Number(slider.value));
    model.save_changes();
  });
  prev.addEventListener("click", () => model.send({ type: "step", delta: -1 }));
  next.addEventListener("click", () => model.send({ type: "step", delta: 1 }));

  function showPosition() {
    slider.max = String(model.get("iterations"));
    slider.value = String(model.get("iteration"));
    for (const [phase, b] of phaseButtons) {
      b.setAttribute("aria-pressed", String(phase === model.get("phase")));
    }
    position.textContent = model.get("position");
  }
  function showTree() {
    tree.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(model.get("svg"));
  }
  function showError() {
    error.textContent = model.get("error");
  }

  const listeners = [
    ["change:iteration", showPosition],
    ["change:phase", showPosition],
    ["change:position", showPosition],
    ["change:svg", showTree],
    ["change:error", showError],
  ];
  for (const [event, listener] of listeners) model.on(event, listener);
  showPosition();
  showTree();
  showError();
  return () => {
    for (const [event, listener] of listeners) model.off(event, listener);
  };
}

export default { render };

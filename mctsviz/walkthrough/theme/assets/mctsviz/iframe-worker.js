/* Search for a site opened from files (file://), with nothing fetched from the internet.
 *
 * Browsers refuse `new Worker(url)` for file:// pages, and Material's search runs in a worker.
 * Material's offline plugin would load a shim for this from a CDN; this local one plays the
 * same part: it runs the worker script in a hidden same-origin iframe and passes the messages
 * across. Material's search worker knows this arrangement (it looks for `IFrameWorker` in its
 * parent window). Served pages (http, https) keep the browser's real Worker.
 */
(function () {
  "use strict";
  if (window.location.protocol !== "file:" || typeof EventTarget === "undefined") return;

  function IFrameWorker(url) {
    var target = new EventTarget();
    var frame = document.createElement("iframe");
    var queue = [];
    var ready = false;
    frame.hidden = true;
    frame.setAttribute("aria-hidden", "true");
    frame.tabIndex = -1;
    (document.body || document.documentElement).appendChild(frame);
    var inner = frame.contentWindow;

    function deliver(data) {
      inner.dispatchEvent(new MessageEvent("message", { data: data }));
    }

    // The worker's postMessage() answers the page.
    inner.postMessage = function (data) {
      target.dispatchEvent(new MessageEvent("message", { data: data }));
    };
    inner.importScripts = function () {
      throw new Error("importScripts is not available in a file:// search worker");
    };

    var script = inner.document.createElement("script");
    script.src = new URL(String(url), window.location.href).href;
    script.onload = function () {
      ready = true;
      queue.splice(0).forEach(deliver);
    };
    script.onerror = function () {
      target.dispatchEvent(new Event("error"));
    };
    (inner.document.head || inner.document.documentElement).appendChild(script);

    target.postMessage = function (data) {
      if (ready) deliver(data);
      else queue.push(data);
    };
    target.terminate = function () {
      frame.remove();
    };
    return target;
  }

  window.IFrameWorker = IFrameWorker;
  window.Worker = IFrameWorker;
})();

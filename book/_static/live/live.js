// The live book: the chapters' explorers and exercise checks, computed in the reader's browser.
//
// When a chapter runs at build time, each explorer and each unanswered exercise check leaves a hidden
// <div class="cutelite-live" data-live="{...}"> in its cell's output (cutelite/teach/announce.py). This
// script gives each one a live twin: explorers get a "Make this page live" button, exercises an answer box.
// The first click starts worker.js (Pyodide running cutelite) and shows its progress; after that every
// change of a box is recomputed by cutelite itself (cutelite/teach/live.py), one call at a time. A call
// that runs past LIMIT_MS is stopped: its worker is terminated, the reader is told why, and a new worker
// takes the calls that follow. Without JavaScript the page is the notebook as built.
(function () {
  "use strict";
  const base = document.currentScript.src.replace(/[^/]*$/, "");
  // A computation running longer than this is stopped: the worker is terminated and a new one started, so
  // one slow input cannot freeze the page. (A page may lower it, as the browser test does, through
  // window.cuteliteLiveLimitMs.)
  const LIMIT_MS = 2000;
  const limitMs = () => Number(window.cuteliteLiveLimitMs) || LIMIT_MS;
  let runtime = null;     // {worker, ready: Promise, isReady}
  let current = null;     // the call the worker is computing: {id, job, timer}
  const queue = [];       // calls waiting for the worker: {fn, args, resolve, reject}
  let nextId = 0;
  let workers = 0;
  let stops = 0;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function showProgress(text, fraction) {
    document.querySelectorAll(".live-status").forEach((s) => {
      s.textContent = fraction < 1 ? "Loading: " + text + "…" : "";
      s.dataset.fraction = fraction;
    });
    document.querySelectorAll(".live-progress").forEach((p) => {
      p.hidden = fraction >= 1;
      p.value = fraction;
    });
  }

  // Start a worker (Pyodide running cutelite) unless one is running; resolves when cutelite is ready.
  function start() {
    if (runtime) return runtime.ready;
    const worker = new Worker(base + "worker.js");
    document.body.dataset.liveWorkers = String(++workers);
    const rt = { worker, isReady: false };
    rt.ready = new Promise((resolve, reject) => {
      worker.onmessage = (event) => {
        const m = event.data;
        if (m.progress) showProgress(m.progress, m.fraction);
        else if (m.ready) resolve();
        else if (m.failed) reject(new Error(m.failed));
        else finish(m);
      };
      worker.onerror = (e) => reject(new Error(e.message || "the live runtime did not start"));
    });
    runtime = rt;
    rt.ready.then(() => { rt.isReady = true; pump(); }, (e) => {
      showProgress("failed: " + e.message, 0);
      if (runtime === rt) runtime = null;
      queue.splice(0).forEach((job) => job.reject(e));
    });
    return rt.ready;
  }

  // Send the next waiting call to a ready worker, and start its clock.
  function pump() {
    if (current || !queue.length || !runtime || !runtime.isReady) return;
    const job = queue.shift();
    const id = nextId++;
    current = { id, job, timer: setTimeout(() => stop(id), limitMs()) };
    runtime.worker.postMessage({ id, fn: job.fn, args: job.args });
  }

  function finish(m) {
    if (!current || m.id !== current.id) return;
    clearTimeout(current.timer);
    const { job } = current;
    current = null;
    if (m.error) job.reject(new Error(m.error));
    else job.resolve(m.result);
    pump();
  }

  // The call `id` ran past the limit: end its worker, tell its caller, start a fresh worker for the rest.
  function stop(id) {
    if (!current || current.id !== id) return;
    const { job } = current;
    current = null;
    runtime.worker.terminate();
    runtime = null;
    document.body.dataset.liveStops = String(++stops);
    const e = new Error("this took more than " + (limitMs() / 1000) + " s to compute in your browser, so the " +
      "live runtime was restarted (the next input computes again). Try a smaller input.");
    e.stopped = true;
    job.reject(e);
    start();
  }

  // Call cutelite.teach.live.<fn>(...args) in the worker; resolves with its JSON result.
  function call(fn, ...args) {
    return new Promise((resolve, reject) => {
      queue.push({ fn, args, resolve, reject });
      start().then(pump, () => {});
    });
  }

  function failure(e) {
    return e.stopped ? "Stopped: " + e.message : "The live runtime failed: " + e.message;
  }

  function statusLine() {
    const line = el("span", "live-load");
    const bar = el("progress", "live-progress");
    bar.max = 1;
    bar.value = 0;
    bar.hidden = true;
    line.append(bar, el("span", "live-status"));
    return line;
  }

  // ---- explorers: a form of the notebook widget's fields, the text and the SVG picture ----------------
  const panels = [];

  function field(name, label, value, options) {
    const wrap = el("label", "live-field", label + " ");
    let input;
    if (options) {
      input = el("select");
      options.forEach((o) => input.append(new Option(o, o, o === value, o === value)));
    } else {
      input = el("input");
      input.type = "text";
      input.value = value;
      input.size = Math.max(6, value.length + 2);
    }
    input.name = name;
    wrap.append(input);
    return wrap;
  }

  function explorer(spec, output) {
    const panel = el("div", "live-panel");
    panel.dataset.kind = spec.kind;
    const go = el("button", "live-go", "Make this page live");
    go.type = "button";
    go.title = "Recompute this explorer in your browser (cutelite in Pyodide; nothing is sent anywhere)";
    const bar = el("div", "live-bar");
    bar.append(go, statusLine());
    const form = el("form", "live-form");
    form.hidden = true;
    spec.fields.forEach((f) => form.append(field(...f)));
    const text = el("pre", "live-text");
    const picture = el("div", "live-picture");
    const timing = el("small", "live-ms");
    panel.append(bar, form, text, picture, timing);
    output.after(panel);

    let busy = false;
    let again = false;
    async function redraw() {
      if (busy) { again = true; return; }
      busy = true;
      const values = Object.fromEntries(new FormData(form));
      const t0 = performance.now();
      try {
        const r = await call("view", spec.kind, JSON.stringify(values));
        text.textContent = r.text;
        picture.innerHTML = r.svg;
      } catch (e) {
        text.textContent = failure(e);
        picture.innerHTML = "";
      }
      const ms = performance.now() - t0;
      panel.dataset.ms = ms.toFixed(1);
      panel.dataset.shown = JSON.stringify(values);
      panel.dataset.draws = String(Number(panel.dataset.draws || 0) + 1);
      timing.textContent = "computed in your browser in " + ms.toFixed(0) + " ms";
      busy = false;
      if (again) { again = false; redraw(); }
    }
    form.addEventListener("input", redraw);
    form.addEventListener("change", redraw);
    form.addEventListener("submit", (e) => e.preventDefault());

    function goLive() {
      go.disabled = true;
      return start().then(() => {
        bar.remove();
        form.hidden = false;
        // The notebook's frozen widget follows the announcement in the same cell output: hide it.
        let next = panel.nextElementSibling;
        while (next) { next.hidden = true; next = next.nextElementSibling; }
        return redraw();
      }, () => { go.disabled = false; });
    }
    go.addEventListener("click", () => {
      const t0 = performance.now();
      Promise.all(panels.map((p) => p())).then(() => {
        document.body.dataset.liveFirstMs = (performance.now() - t0).toFixed(0);
      });
    });
    panels.push(goLive);
  }

  // ---- exercises: an answer box that runs the notebook's checker --------------------------------------
  function exercise(spec, output) {
    const form = el("form", "live-answer");
    const input = el("input");
    input.type = "text";
    input.size = 40;
    input.placeholder = "your answer, as in the notebook's cell";
    input.setAttribute("aria-label", "answer to " + spec.name);
    const check = el("button", "live-check", "Check");
    check.type = "submit";
    const verdict = el("div", "live-verdict");
    form.append(el("span", "live-label", spec.name + ": "), input, check, statusLine(), verdict);
    output.after(form);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      verdict.className = "live-verdict";
      verdict.textContent = "checking…";
      try {
        const r = await call("check", JSON.stringify(spec), input.value);
        verdict.className = "live-verdict " + (r.ok ? "right" : "wrong");
        verdict.textContent = (r.ok ? "✔ " : "✘ ") + r.message;
      } catch (err) {
        verdict.className = "live-verdict wrong";
        verdict.textContent = failure(err);
      }
    });
  }

  function init() {
    document.querySelectorAll("div.cutelite-live[data-live]").forEach((div) => {
      let spec;
      try { spec = JSON.parse(div.dataset.live); } catch (e) { return; }
      const output = div.closest(".output") || div;
      if (spec.live === "explorer") explorer(spec, output);
      else if (spec.live === "exercise") exercise(spec, output);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

// The live book: the chapters' explorers and exercise checks, computed in the reader's browser.
//
// When a chapter runs at build time, each explorer and each unanswered exercise check leaves a hidden
// <div class="cutelite-live" data-live="{...}"> in its cell's output (cutelite/teach/live.py). This script
// gives each one a live twin: explorers get a "Make this page live" button, exercises an answer box.
// The first click starts worker.js (Pyodide running cutelite) and shows its progress; after that every
// change of a box is recomputed by cutelite itself. Without JavaScript the page is the notebook as built.
(function () {
  "use strict";
  const base = document.currentScript.src.replace(/[^/]*$/, "");
  let worker = null;
  let started = null;
  let nextId = 0;
  const pending = new Map();

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

  // Start the worker once; resolves when cutelite is ready in it.
  function start() {
    if (started) return started;
    started = new Promise((resolve, reject) => {
      worker = new Worker(base + "worker.js");
      worker.onmessage = (event) => {
        const m = event.data;
        if (m.progress) showProgress(m.progress, m.fraction);
        else if (m.ready) resolve();
        else if (m.failed) reject(new Error(m.failed));
        else {
          const p = pending.get(m.id);
          pending.delete(m.id);
          if (m.error) p.reject(new Error(m.error));
          else p.resolve(m.result);
        }
      };
      worker.onerror = (e) => reject(new Error(e.message || "the live runtime did not start"));
    });
    started.catch((e) => showProgress("failed: " + e.message, 0));
    return started;
  }

  // Call cutelite.teach.live.<fn>(...args) in the worker; resolves with its JSON result.
  function call(fn, ...args) {
    return start().then(() => new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, fn, args });
    }));
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
        text.textContent = "The live runtime failed: " + e.message;
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
        verdict.textContent = "The live runtime failed: " + err.message;
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

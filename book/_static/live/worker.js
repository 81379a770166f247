// The live book's Web Worker: Pyodide (served from this book's _static/live/pyodide/) runs cutelite.
// Messages in:  {id, fn: "view", args: [kind, valuesJSON]} or {id, fn: "check", args: [specJSON, text]}
// Messages out: {progress: "text", fraction} while loading; {ready: true}; {id, result} or {id, error}.
"use strict";

const here = self.location.href.replace(/[^/]*$/, "");

async function start() {
  postMessage({ progress: "loading the Python runtime (Pyodide)", fraction: 0.1 });
  importScripts(here + "pyodide/pyodide.js");
  const pyodide = await loadPyodide({ indexURL: here + "pyodide/" });
  postMessage({ progress: "installing cutelite", fraction: 0.8 });
  const manifest = await (await fetch(here + "manifest.json")).json();
  const wheel = await (await fetch(here + manifest.wheel)).arrayBuffer();
  const site = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  pyodide.unpackArchive(wheel, "wheel", { extractDir: site });
  const live = pyodide.pyimport("cutelite.teach.live");
  postMessage({ progress: "ready", fraction: 1 });
  return live;
}

const ready = start();
ready.then(() => postMessage({ ready: true }), (e) => postMessage({ failed: String(e) }));

self.onmessage = async (event) => {
  const { id, fn, args } = event.data;
  try {
    const live = await ready;
    postMessage({ id, result: JSON.parse(live[fn](...args)) });
  } catch (e) {
    postMessage({ id, error: String(e) });
  }
};

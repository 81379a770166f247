// Loaded before embed.js on pages that show ipywidgets (see nb_ipywidgets_js in _config.yml).
// The widget renderer typesets widget labels with the MathJax 2 call
//   MathJax.Hub.Queue(["Typeset", MathJax.Hub, element])
// whenever window.MathJax exists. The book loads MathJax 3, which has no Hub, so that call would throw.
// This adds Hub.Queue, mapped to MathJax 3's typesetPromise. The load listener is registered before the
// renderer's, so it runs first.
window.addEventListener("load", function () {
  var mj = window.MathJax;
  if (!mj || mj.Hub) return;
  mj.Hub = {
    Queue: function (job) {
      var element = Array.isArray(job) ? job[2] : null;
      if (!element || typeof mj.typesetPromise !== "function") return;
      var ready = (mj.startup && mj.startup.promise) || Promise.resolve();
      ready.then(function () { return mj.typesetPromise([element]); }).catch(function (err) {
        console.warn("MathJax could not typeset a widget label:", err);
      });
    },
  };
});

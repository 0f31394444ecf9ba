/* courseops' only script. Served from /static/ so the Content-Security-Policy can forbid inline
   script: confirmations come from data-confirm attributes, the grading progress bar from
   data-progress URLs. Every page works without it, minus the confirmation prompts. */
(function () {
  "use strict";

  function confirmBeforeSubmit(form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.dataset.confirm)) { event.preventDefault(); }
    });
  }

  function pollProgress(item) {
    var bar = item.querySelector("progress");
    var count = item.querySelector(".count");
    var status = item.querySelector(".status");
    var note = item.querySelector(".note");
    function poll() {
      fetch(item.dataset.progress, {credentials: "same-origin"})
        .then(function (r) { return r.json(); })
        .then(function (p) {
          bar.max = p.expected || 1;
          bar.value = p.done;
          count.textContent = p.done + " / " + p.expected;
          status.textContent = p.status_label || p.status;
          if (note) { note.textContent = p.note || ""; }
          if (p.final && item.dataset.reload) { window.location.reload(); return; }
          if (p.status !== "done" && p.status !== "failed" && !p.final) { setTimeout(poll, 1000); }
        })
        .catch(function () { setTimeout(poll, 5000); });
    }
    poll();
  }

  function copyButton(button) {
    button.addEventListener("click", function () {
      var field = document.querySelector(button.dataset.copy);
      if (!field) { return; }
      field.select();
      var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 2000); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand("copy"); done(); });
      } else { document.execCommand("copy"); done(); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("button[data-copy]").forEach(copyButton);
    document.querySelectorAll("form[data-confirm]").forEach(confirmBeforeSubmit);
    document.querySelectorAll("[data-progress]").forEach(pollProgress);
  });
}());

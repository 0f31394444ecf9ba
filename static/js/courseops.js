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

  // The menu's sections (WAI-ARIA disclosure navigation): the button toggles its pages (Enter
  // and Space are the button's own), Escape closes and returns focus to the button, leaving the
  // section or clicking elsewhere closes it, and opening one closes the others.
  function disclosureMenus(nav) {
    var buttons = Array.prototype.slice.call(nav.querySelectorAll(".nav-group-label"));
    function close(button, focus) {
      button.setAttribute("aria-expanded", "false");
      if (focus) { button.focus(); }
    }
    buttons.forEach(function (button) {
      var group = button.parentElement;
      button.addEventListener("click", function () {
        var open = button.getAttribute("aria-expanded") === "true";
        buttons.forEach(function (other) { if (other !== button) { close(other, false); } });
        button.setAttribute("aria-expanded", open ? "false" : "true");
      });
      group.addEventListener("keydown", function (event) {
        if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
          event.preventDefault();
          close(button, true);
        }
      });
      group.addEventListener("focusout", function (event) {
        if (event.relatedTarget && !group.contains(event.relatedTarget)) { close(button, false); }
      });
    });
    document.addEventListener("click", function (event) {
      if (!nav.contains(event.target)) { buttons.forEach(function (b) { close(b, false); }); }
    });
  }

  // The phone's menu button (WAI-ARIA disclosure): it opens and closes the menu and says which
  // (aria-expanded); Escape anywhere in the open menu closes it and puts focus back on it.
  function phoneMenu(toggle, nav) {
    function set(open) { toggle.setAttribute("aria-expanded", open ? "true" : "false"); }
    toggle.addEventListener("click", function () {
      set(toggle.getAttribute("aria-expanded") !== "true");
    });
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape" || toggle.getAttribute("aria-expanded") !== "true") { return; }
      event.preventDefault();
      set(false);
      toggle.focus();
    });
  }

  // A box that scrolls sideways (a wide table on a phone) must be reachable by keyboard to be
  // scrolled: it becomes a named Tab stop while, and only while, it overflows.
  function scrollRegions() {
    document.querySelectorAll("table").forEach(function (table) {
      // On a phone a table is its own scroll box (CSS): a Tab stop while it overflows; its role
      // stays "table", named by its aria-label or caption.
      if (table.scrollWidth > table.clientWidth + 1) { table.setAttribute("tabindex", "0"); }
      else if (table.getAttribute("tabindex") === "0") { table.removeAttribute("tabindex"); }
    });
    document.querySelectorAll(".table-wrap, .scroll-x").forEach(function (box) {
      if (box.dataset.fixedStop) { return; }
      if (box.scrollWidth > box.clientWidth + 1) {
        var table = box.querySelector("table");
        var caption = table && table.querySelector("caption");
        var name = box.dataset.name || (table && table.getAttribute("aria-label")) ||
          (caption && caption.textContent.trim()) || "Table";
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", name + " (scrolls sideways)");
      } else if (box.getAttribute("role") === "region") {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }

  // A notice of work in progress (data-watch="seconds", a role="status" region with an id):
  // its text is refreshed from the same page in place, so a screen reader hears the progress,
  // and the page is loaded again once, when the notice is gone (the work is done). This
  // replaces pages that reloaded themselves every few seconds.
  function watch(notice) {
    var every = (Number(notice.dataset.watch) || 5) * 1000;
    function tick() {
      if (notice.dataset.paused) { setTimeout(tick, every); return; }
      fetch(window.location.href, {credentials: "same-origin"})
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(notice.id);
          if (!fresh) { window.location.reload(); return; }
          if (fresh.textContent !== notice.textContent) { notice.innerHTML = fresh.innerHTML; }
          setTimeout(tick, every);
        })
        .catch(function () { setTimeout(tick, every * 2); });
    }
    setTimeout(tick, every);
  }

  document.documentElement.classList.replace("no-js", "js");

  document.addEventListener("DOMContentLoaded", function () {
    var nav = document.getElementById("main-nav");
    if (nav) { disclosureMenus(nav); }
    var toggle = document.querySelector(".nav-toggle");
    if (toggle && nav) { phoneMenu(toggle, nav); }
    document.querySelectorAll(".scroll-x[tabindex]").forEach(function (b) { b.dataset.fixedStop = "1"; });
    scrollRegions();
    window.addEventListener("resize", scrollRegions);
    document.querySelectorAll("[data-watch][id]").forEach(watch);
    // A pause button for a watched region (WCAG 2.2.2): data-pause names the region's id.
    document.querySelectorAll("button[data-pause]").forEach(function (button) {
      var region = document.getElementById(button.dataset.pause);
      if (!region) { return; }
      button.hidden = false;
      button.addEventListener("click", function () {
        var paused = button.getAttribute("aria-pressed") !== "true";
        button.setAttribute("aria-pressed", paused ? "true" : "false");
        if (paused) { region.dataset.paused = "1"; } else { delete region.dataset.paused; }
      });
    });
    // After a refused submission the page opens on what went wrong: focus to the error summary.
    // (Again once loaded: going to the page's #fragment, e.g. #step-2, would take focus away.)
    var problems = document.getElementById("error-summary");
    if (problems) {
      problems.focus();
      window.addEventListener("load", function () {
        if (document.activeElement === document.body) { problems.focus(); }
      });
    }
    document.querySelectorAll("button[data-copy]").forEach(copyButton);
    document.querySelectorAll("form[data-confirm]").forEach(confirmBeforeSubmit);
    document.querySelectorAll("[data-progress]").forEach(pollProgress);
  });
}());

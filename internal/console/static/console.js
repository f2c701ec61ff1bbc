// weft console: the one script the pages load (the Content-Security-Policy
// allows no other). It follows a thread's live timeline and fetches an LLM
// call's request and response when they are opened. Everything it inserts
// comes rendered and escaped from the server, or goes in as textContent.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  var timeline = document.getElementById("timeline");
  var live = document.getElementById("live");
  if (timeline && timeline.dataset.events && window.EventSource) {
    var es = new EventSource(timeline.dataset.events);
    es.addEventListener("open", function () { live.textContent = "live updates: on"; });
    es.addEventListener("error", function () { live.textContent = "live updates: reconnecting…"; });
    es.addEventListener("stitch", function (ev) {
      var t = document.createElement("template");
      t.innerHTML = ev.data;
      var li = t.content.firstElementChild;
      if (!li || document.getElementById(li.id)) return;
      timeline.appendChild(li);
    });
    es.addEventListener("status", function (ev) {
      var parts = ev.data.split(" ");
      var badge = document.getElementById("status");
      if (badge) {
        badge.textContent = parts[0];
        badge.className = "badge " + parts[0];
      }
      var abort = document.getElementById("abort");
      if (abort && parts[1] !== "true") abort.remove();
    });
  }

  document.addEventListener("toggle", function (ev) {
    var d = ev.target;
    if (!d.matches || !d.matches("details.lazy") || !d.open || d.dataset.loaded) return;
    d.dataset.loaded = "1";
    var pre = d.querySelector("pre");
    pre.textContent = "loading…";
    fetch(d.dataset.src, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (j) { pre.textContent = JSON.stringify(j, null, 2); })
      .catch(function (e) { pre.textContent = "could not load: " + e; });
  }, true);
});

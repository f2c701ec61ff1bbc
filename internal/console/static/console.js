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
      var partial = document.getElementById("partial");
      // The answer being written stays last until its stitch arrives.
      timeline.insertBefore(li, partial);
      if (partial && (li.classList.contains("t-llm_call") || li.classList.contains("t-error"))) partial.remove();
    });
    // The answer as the model writes it: each event carries the whole text
    // so far, shown as text (never markup) in one element at the end.
    es.addEventListener("partial", function (ev) {
      var p = JSON.parse(ev.data);
      var li = document.getElementById("partial");
      if (!li) {
        li = document.createElement("li");
        li.id = "partial";
        li.className = "stitch partial";
        var meta = document.createElement("div");
        meta.className = "meta";
        var type = document.createElement("span");
        type.className = "type";
        type.textContent = "answer being written…";
        meta.appendChild(type);
        li.appendChild(meta);
        var text = document.createElement("div");
        text.className = "text";
        li.appendChild(text);
        timeline.appendChild(li);
      }
      li.querySelector(".text").textContent = p.text || "";
    });
    es.addEventListener("partial_end", function () {
      var li = document.getElementById("partial");
      if (li) li.remove();
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

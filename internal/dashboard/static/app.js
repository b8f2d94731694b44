// The dashboard's one script, served from the dashboard's origin under a CSP without inline
// scripts. It copies a new key and gives the pages that call the REST API a browser token.
"use strict";

document.addEventListener("click", function (ev) {
  var btn = ev.target.closest("button[data-copy]");
  if (!btn) return;
  var field = document.getElementById(btn.getAttribute("data-copy"));
  if (!field) return;
  navigator.clipboard.writeText(field.value).then(function () {
    btn.textContent = "Copied";
  }, function () {
    field.select();
  });
});

// payoutAPI calls the REST API as the signed-in user: a short-lived token from
// POST token (with the page's CSRF token), kept in memory only, renewed before it expires.
var payoutAPI = (function () {
  var token = null, expires = 0;
  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute("content") : "";
  }
  function fresh() {
    if (token && Date.now() < expires - 30000) return Promise.resolve(token);
    return fetch("token", { method: "POST", headers: { "X-CSRF-Token": csrf() }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error("signed out"); return r.json(); })
      .then(function (b) { token = b.token; expires = Date.parse(b.expiresAt); return token; });
  }
  return function (path, init) {
    init = init || {};
    return fresh().then(function (t) {
      init.headers = Object.assign({}, init.headers, { Authorization: "Bearer " + t });
      return fetch(path, init);
    });
  };
})();
window.payoutAPI = payoutAPI;

// A recipient form's refresh-on-change fields (spec 4.3): when one changes, the form is sent
// with its refresh button, and the server answers the form the API's requirements give for the
// details so far. Without the script the user presses that button.
document.addEventListener("change", function (ev) {
  var field = ev.target;
  if (!field.hasAttribute || !field.hasAttribute("data-refresh") || !field.form) return;
  var btn = field.form.querySelector('button[name="action"][value="refresh"]');
  if (btn) field.form.requestSubmit(btn);
});

// A copy button of a text on the page (the deposit address).
document.addEventListener("click", function (ev) {
  var btn = ev.target.closest("button[data-copy-text]");
  if (!btn) return;
  var el = document.getElementById(btn.getAttribute("data-copy-text"));
  if (!el) return;
  navigator.clipboard.writeText(el.textContent.trim()).then(function () {
    btn.textContent = "Copied";
  }, function () {});
});

// A transfer's status updates by itself: the page's status endpoint (same origin, the session's
// cookie) is polled until the transfer ends, and the status, failure reason, refund hash and
// timeline are redrawn from it. Without the script a reload shows the same.
(function () {
  var live = document.getElementById("transfer-live");
  if (!live || live.getAttribute("data-ended") === "true") return;
  var url = live.getAttribute("data-status-url");
  var every = 3000, failures = 0;
  function show(st) {
    var status = document.getElementById("transfer-status");
    status.textContent = st.statusLabel;
    status.setAttribute("data-status", st.status);
    document.getElementById("transfer-updated").textContent = st.updatedAt;
    var err = document.getElementById("transfer-error");
    err.textContent = st.error || "";
    err.hidden = !st.error;
    var refund = document.getElementById("transfer-refund");
    if (st.refundTxHash) {
      refund.replaceChildren("Refunded to the sender in transaction ", Object.assign(document.createElement("code"), { textContent: st.refundTxHash }));
    }
    refund.hidden = !st.refundTxHash;
    var list = document.getElementById("transfer-timeline");
    list.replaceChildren.apply(list, st.history.map(function (h) {
      var li = document.createElement("li");
      var label = Object.assign(document.createElement("span"), { className: "status", textContent: h.label });
      var at = Object.assign(document.createElement("time"), { textContent: h.at });
      li.append(label, " ", at, h.message ? ": " + h.message : "");
      return li;
    }));
    live.setAttribute("data-ended", st.ended ? "true" : "false");
  }
  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (st) {
        failures = 0;
        show(st);
        if (!st.ended) setTimeout(poll, every);
      }, function () {
        // signed out or unreachable: back off, give up after a while (a reload starts again)
        if (++failures < 10) setTimeout(poll, every * failures);
      });
  }
  setTimeout(poll, every);
})();
